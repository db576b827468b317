# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

resource "aws_vpc" "main" {
  cidr_block = "10.0.0.0/16"
  tags       = var.tags
}

resource "aws_subnet" "subnet_a" {
  vpc_id             = aws_vpc.main.id
  availability_zones = ["eu-west-1a", "eu-west-1b"]
  depends_on         = [aws_vpc.main]
}
