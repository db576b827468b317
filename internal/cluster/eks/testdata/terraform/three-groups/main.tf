# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40"
    }
  }
}

provider "aws" {
  region = var.region
  default_tags {
    tags = var.tags
  }
}

resource "aws_vpc" "shop" {
  cidr_block           = "10.20.0.0/16"
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags = {
    Name               = "shop"
    "nuv.dev/resource" = "vpc/shop"
  }
}

resource "aws_subnet" "private-us-east-1a" {
  vpc_id                  = aws_vpc.shop.id
  cidr_block              = "10.20.0.0/19"
  availability_zone       = "us-east-1a"
  map_public_ip_on_launch = false
  tags = {
    Name                              = "shop-private-us-east-1a"
    "karpenter.sh/discovery"          = "shop"
    "kubernetes.io/role/internal-elb" = "1"
    "nuv.dev/resource"                = "subnet/private-us-east-1a"
  }
}

resource "aws_subnet" "private-us-east-1b" {
  vpc_id                  = aws_vpc.shop.id
  cidr_block              = "10.20.32.0/19"
  availability_zone       = "us-east-1b"
  map_public_ip_on_launch = false
  tags = {
    Name                              = "shop-private-us-east-1b"
    "karpenter.sh/discovery"          = "shop"
    "kubernetes.io/role/internal-elb" = "1"
    "nuv.dev/resource"                = "subnet/private-us-east-1b"
  }
}

resource "aws_subnet" "private-us-east-1c" {
  vpc_id                  = aws_vpc.shop.id
  cidr_block              = "10.20.64.0/19"
  availability_zone       = "us-east-1c"
  map_public_ip_on_launch = false
  tags = {
    Name                              = "shop-private-us-east-1c"
    "karpenter.sh/discovery"          = "shop"
    "kubernetes.io/role/internal-elb" = "1"
    "nuv.dev/resource"                = "subnet/private-us-east-1c"
  }
}

resource "aws_subnet" "public-us-east-1a" {
  vpc_id                  = aws_vpc.shop.id
  cidr_block              = "10.20.128.0/19"
  availability_zone       = "us-east-1a"
  map_public_ip_on_launch = true
  tags = {
    Name                     = "shop-public-us-east-1a"
    "kubernetes.io/role/elb" = "1"
    "nuv.dev/resource"       = "subnet/public-us-east-1a"
  }
}

resource "aws_subnet" "public-us-east-1b" {
  vpc_id                  = aws_vpc.shop.id
  cidr_block              = "10.20.160.0/19"
  availability_zone       = "us-east-1b"
  map_public_ip_on_launch = true
  tags = {
    Name                     = "shop-public-us-east-1b"
    "kubernetes.io/role/elb" = "1"
    "nuv.dev/resource"       = "subnet/public-us-east-1b"
  }
}

resource "aws_subnet" "public-us-east-1c" {
  vpc_id                  = aws_vpc.shop.id
  cidr_block              = "10.20.192.0/19"
  availability_zone       = "us-east-1c"
  map_public_ip_on_launch = true
  tags = {
    Name                     = "shop-public-us-east-1c"
    "kubernetes.io/role/elb" = "1"
    "nuv.dev/resource"       = "subnet/public-us-east-1c"
  }
}

resource "aws_internet_gateway" "shop" {
  vpc_id = aws_vpc.shop.id
  tags = {
    Name               = "shop-internet-gateway"
    "nuv.dev/resource" = "internet-gateway/shop"
  }
}

resource "aws_eip" "nat-us-east-1a" {
  domain = "vpc"
  tags = {
    Name               = "shop-nat-us-east-1a"
    "nuv.dev/resource" = "elastic-ip/nat-us-east-1a"
  }
}

resource "aws_nat_gateway" "us-east-1a" {
  allocation_id = aws_eip.nat-us-east-1a.id
  subnet_id     = aws_subnet.public-us-east-1a.id
  tags = {
    Name               = "shop-us-east-1a"
    "nuv.dev/resource" = "nat-gateway/us-east-1a"
  }
  depends_on = [aws_internet_gateway.shop]
}

resource "aws_eip" "nat-us-east-1b" {
  domain = "vpc"
  tags = {
    Name               = "shop-nat-us-east-1b"
    "nuv.dev/resource" = "elastic-ip/nat-us-east-1b"
  }
}

resource "aws_nat_gateway" "us-east-1b" {
  allocation_id = aws_eip.nat-us-east-1b.id
  subnet_id     = aws_subnet.public-us-east-1b.id
  tags = {
    Name               = "shop-us-east-1b"
    "nuv.dev/resource" = "nat-gateway/us-east-1b"
  }
  depends_on = [aws_internet_gateway.shop]
}

resource "aws_eip" "nat-us-east-1c" {
  domain = "vpc"
  tags = {
    Name               = "shop-nat-us-east-1c"
    "nuv.dev/resource" = "elastic-ip/nat-us-east-1c"
  }
}

resource "aws_nat_gateway" "us-east-1c" {
  allocation_id = aws_eip.nat-us-east-1c.id
  subnet_id     = aws_subnet.public-us-east-1c.id
  tags = {
    Name               = "shop-us-east-1c"
    "nuv.dev/resource" = "nat-gateway/us-east-1c"
  }
  depends_on = [aws_internet_gateway.shop]
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.shop.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.shop.id
  }
  tags = {
    Name               = "shop-public"
    "nuv.dev/resource" = "route-table/public"
  }
}

resource "aws_route_table_association" "public-us-east-1a" {
  subnet_id      = aws_subnet.public-us-east-1a.id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table_association" "public-us-east-1b" {
  subnet_id      = aws_subnet.public-us-east-1b.id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table_association" "public-us-east-1c" {
  subnet_id      = aws_subnet.public-us-east-1c.id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table" "private-us-east-1a" {
  vpc_id = aws_vpc.shop.id
  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.us-east-1a.id
  }
  tags = {
    Name               = "shop-private-us-east-1a"
    "nuv.dev/resource" = "route-table/private-us-east-1a"
  }
}

resource "aws_route_table_association" "private-us-east-1a" {
  subnet_id      = aws_subnet.private-us-east-1a.id
  route_table_id = aws_route_table.private-us-east-1a.id
}

resource "aws_route_table" "private-us-east-1b" {
  vpc_id = aws_vpc.shop.id
  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.us-east-1b.id
  }
  tags = {
    Name               = "shop-private-us-east-1b"
    "nuv.dev/resource" = "route-table/private-us-east-1b"
  }
}

resource "aws_route_table_association" "private-us-east-1b" {
  subnet_id      = aws_subnet.private-us-east-1b.id
  route_table_id = aws_route_table.private-us-east-1b.id
}

resource "aws_route_table" "private-us-east-1c" {
  vpc_id = aws_vpc.shop.id
  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.us-east-1c.id
  }
  tags = {
    Name               = "shop-private-us-east-1c"
    "nuv.dev/resource" = "route-table/private-us-east-1c"
  }
}

resource "aws_route_table_association" "private-us-east-1c" {
  subnet_id      = aws_subnet.private-us-east-1c.id
  route_table_id = aws_route_table.private-us-east-1c.id
}

resource "aws_security_group" "shop" {
  name        = "nuv-shop"
  description = "nuv cluster shop: control plane and nodes"
  vpc_id      = aws_vpc.shop.id
  ingress {
    description = "everything between the control plane and the nodes"
    from_port   = 0
    to_port     = 0
    protocol    = "-1"
    self        = true
  }
  egress {
    from_port   = 0
    to_port     = 0
    protocol    = "-1"
    cidr_blocks = ["0.0.0.0/0"]
  }
  tags = {
    Name                     = "shop-security-group"
    "karpenter.sh/discovery" = "shop"
    "nuv.dev/resource"       = "security-group/shop"
  }
}

resource "aws_iam_role" "nuv-shop-cluster" {
  name = "nuv-shop-cluster"
  assume_role_policy = jsonencode({
    Statement = [{
      Action = "sts:AssumeRole"
      Effect = "Allow"
      Principal = {
        Service = "eks.amazonaws.com"
      }
    }]
    Version = "2012-10-17"
  })
}

resource "aws_iam_role_policy_attachment" "nuv-shop-cluster-AmazonEKSClusterPolicy" {
  role       = aws_iam_role.nuv-shop-cluster.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
}

resource "aws_iam_role" "nuv-shop-nodes" {
  name = "nuv-shop-nodes"
  assume_role_policy = jsonencode({
    Statement = [{
      Action = "sts:AssumeRole"
      Effect = "Allow"
      Principal = {
        Service = "ec2.amazonaws.com"
      }
    }]
    Version = "2012-10-17"
  })
}

resource "aws_iam_role_policy_attachment" "nuv-shop-nodes-AmazonEC2ContainerRegistryReadOnly" {
  role       = aws_iam_role.nuv-shop-nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"
}

resource "aws_iam_role_policy_attachment" "nuv-shop-nodes-AmazonEKSWorkerNodePolicy" {
  role       = aws_iam_role.nuv-shop-nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
}

resource "aws_iam_role_policy_attachment" "nuv-shop-nodes-AmazonEKS_CNI_Policy" {
  role       = aws_iam_role.nuv-shop-nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
}

resource "aws_eks_cluster" "shop" {
  name     = "shop"
  version  = "1.35"
  role_arn = aws_iam_role.nuv-shop-cluster.arn
  vpc_config {
    subnet_ids              = [aws_subnet.private-us-east-1a.id, aws_subnet.private-us-east-1b.id, aws_subnet.private-us-east-1c.id, aws_subnet.public-us-east-1a.id, aws_subnet.public-us-east-1b.id, aws_subnet.public-us-east-1c.id]
    security_group_ids      = [aws_security_group.shop.id]
    endpoint_public_access  = true
    endpoint_private_access = true
    public_access_cidrs     = ["203.0.113.0/24"]
  }
  enabled_cluster_log_types = ["api", "audit"]
  kubernetes_network_config {
    service_ipv4_cidr = "172.20.0.0/16"
  }
  depends_on = [aws_iam_role_policy_attachment.nuv-shop-cluster-AmazonEKSClusterPolicy]
}

resource "aws_eks_node_group" "system" {
  cluster_name    = aws_eks_cluster.shop.name
  node_group_name = "system"
  node_role_arn   = aws_iam_role.nuv-shop-nodes.arn
  subnet_ids      = [aws_subnet.private-us-east-1a.id, aws_subnet.private-us-east-1b.id, aws_subnet.private-us-east-1c.id]
  version         = "1.35"
  instance_types  = ["m6i.large"]
  capacity_type   = "ON_DEMAND"
  ami_type        = "AL2023_x86_64_STANDARD"
  disk_size       = 20
  scaling_config {
    desired_size = 2
    max_size     = 2
    min_size     = 2
  }
  labels = {
    role = "system"
  }
  depends_on = [aws_iam_role_policy_attachment.nuv-shop-nodes-AmazonEC2ContainerRegistryReadOnly, aws_iam_role_policy_attachment.nuv-shop-nodes-AmazonEKSWorkerNodePolicy, aws_iam_role_policy_attachment.nuv-shop-nodes-AmazonEKS_CNI_Policy, aws_route_table.public, aws_route_table.private-us-east-1a, aws_route_table.private-us-east-1b, aws_route_table.private-us-east-1c]
}

resource "aws_eks_node_group" "web" {
  cluster_name    = aws_eks_cluster.shop.name
  node_group_name = "web"
  node_role_arn   = aws_iam_role.nuv-shop-nodes.arn
  subnet_ids      = [aws_subnet.private-us-east-1a.id, aws_subnet.private-us-east-1b.id, aws_subnet.private-us-east-1c.id]
  version         = "1.35"
  instance_types  = ["c6i.xlarge"]
  capacity_type   = "SPOT"
  ami_type        = "AL2023_x86_64_STANDARD"
  disk_size       = 50
  scaling_config {
    desired_size = 3
    max_size     = 6
    min_size     = 1
  }
  taint {
    key    = "dedicated"
    value  = "web"
    effect = "NO_SCHEDULE"
  }
  depends_on = [aws_iam_role_policy_attachment.nuv-shop-nodes-AmazonEC2ContainerRegistryReadOnly, aws_iam_role_policy_attachment.nuv-shop-nodes-AmazonEKSWorkerNodePolicy, aws_iam_role_policy_attachment.nuv-shop-nodes-AmazonEKS_CNI_Policy, aws_route_table.public, aws_route_table.private-us-east-1a, aws_route_table.private-us-east-1b, aws_route_table.private-us-east-1c]
}

resource "aws_eks_node_group" "batch" {
  cluster_name    = aws_eks_cluster.shop.name
  node_group_name = "batch"
  node_role_arn   = aws_iam_role.nuv-shop-nodes.arn
  subnet_ids      = [aws_subnet.private-us-east-1a.id, aws_subnet.private-us-east-1b.id, aws_subnet.private-us-east-1c.id]
  version         = "1.35"
  instance_types  = ["r6i.2xlarge"]
  capacity_type   = "ON_DEMAND"
  ami_type        = "AL2023_x86_64_STANDARD"
  disk_size       = 20
  scaling_config {
    desired_size = 0
    max_size     = 4
    min_size     = 0
  }
  depends_on = [aws_iam_role_policy_attachment.nuv-shop-nodes-AmazonEC2ContainerRegistryReadOnly, aws_iam_role_policy_attachment.nuv-shop-nodes-AmazonEKSWorkerNodePolicy, aws_iam_role_policy_attachment.nuv-shop-nodes-AmazonEKS_CNI_Policy, aws_route_table.public, aws_route_table.private-us-east-1a, aws_route_table.private-us-east-1b, aws_route_table.private-us-east-1c]
}

resource "aws_eks_addon" "aws-ebs-csi-driver" {
  cluster_name                = aws_eks_cluster.shop.name
  addon_name                  = "aws-ebs-csi-driver"
  addon_version               = "v1.50.1-eksbuild.1"
  resolve_conflicts_on_create = "OVERWRITE"
  resolve_conflicts_on_update = "OVERWRITE"
  depends_on                  = [aws_eks_node_group.system, aws_eks_node_group.web, aws_eks_node_group.batch]
}

resource "aws_eks_addon" "coredns" {
  cluster_name                = aws_eks_cluster.shop.name
  addon_name                  = "coredns"
  addon_version               = "v1.12.3-eksbuild.1"
  resolve_conflicts_on_create = "OVERWRITE"
  resolve_conflicts_on_update = "OVERWRITE"
  depends_on                  = [aws_eks_node_group.system, aws_eks_node_group.web, aws_eks_node_group.batch]
}

resource "aws_eks_addon" "kube-proxy" {
  cluster_name                = aws_eks_cluster.shop.name
  addon_name                  = "kube-proxy"
  addon_version               = "v1.35.0-eksbuild.3"
  resolve_conflicts_on_create = "OVERWRITE"
  resolve_conflicts_on_update = "OVERWRITE"
  depends_on                  = [aws_eks_node_group.system, aws_eks_node_group.web, aws_eks_node_group.batch]
}

resource "aws_eks_addon" "vpc-cni" {
  cluster_name                = aws_eks_cluster.shop.name
  addon_name                  = "vpc-cni"
  addon_version               = "v1.20.4-eksbuild.2"
  resolve_conflicts_on_create = "OVERWRITE"
  resolve_conflicts_on_update = "OVERWRITE"
  depends_on                  = [aws_eks_node_group.system, aws_eks_node_group.web, aws_eks_node_group.batch]
}
