# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40"
    }
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = ">= 2.25"
    }
  }
}

provider "aws" {
  region = var.region
  default_tags {
    tags = var.tags
  }
}

provider "kubernetes" {
  host                   = aws_eks_cluster.kp.endpoint
  cluster_ca_certificate = base64decode(aws_eks_cluster.kp.certificate_authority[0].data)
  exec {
    api_version = "client.authentication.k8s.io/v1"
    command     = "nuv"
    args        = ["-eks-token", "--cluster", "kp"]
  }
}

resource "aws_vpc" "kp" {
  cidr_block           = "10.0.0.0/16"
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags = {
    Name               = "kp"
    "nuv.dev/resource" = "vpc/kp"
  }
}

resource "aws_subnet" "private-us-east-1a" {
  vpc_id                  = aws_vpc.kp.id
  cidr_block              = "10.0.0.0/19"
  availability_zone       = "us-east-1a"
  map_public_ip_on_launch = false
  tags = {
    Name                              = "kp-private-us-east-1a"
    "karpenter.sh/discovery"          = "kp"
    "kubernetes.io/role/internal-elb" = "1"
    "nuv.dev/resource"                = "subnet/private-us-east-1a"
  }
}

resource "aws_subnet" "private-us-east-1b" {
  vpc_id                  = aws_vpc.kp.id
  cidr_block              = "10.0.32.0/19"
  availability_zone       = "us-east-1b"
  map_public_ip_on_launch = false
  tags = {
    Name                              = "kp-private-us-east-1b"
    "karpenter.sh/discovery"          = "kp"
    "kubernetes.io/role/internal-elb" = "1"
    "nuv.dev/resource"                = "subnet/private-us-east-1b"
  }
}

resource "aws_subnet" "public-us-east-1a" {
  vpc_id                  = aws_vpc.kp.id
  cidr_block              = "10.0.128.0/19"
  availability_zone       = "us-east-1a"
  map_public_ip_on_launch = true
  tags = {
    Name                     = "kp-public-us-east-1a"
    "kubernetes.io/role/elb" = "1"
    "nuv.dev/resource"       = "subnet/public-us-east-1a"
  }
}

resource "aws_subnet" "public-us-east-1b" {
  vpc_id                  = aws_vpc.kp.id
  cidr_block              = "10.0.160.0/19"
  availability_zone       = "us-east-1b"
  map_public_ip_on_launch = true
  tags = {
    Name                     = "kp-public-us-east-1b"
    "kubernetes.io/role/elb" = "1"
    "nuv.dev/resource"       = "subnet/public-us-east-1b"
  }
}

resource "aws_internet_gateway" "kp" {
  vpc_id = aws_vpc.kp.id
  tags = {
    Name               = "kp-internet-gateway"
    "nuv.dev/resource" = "internet-gateway/kp"
  }
}

resource "aws_eip" "nat-us-east-1a" {
  domain = "vpc"
  tags = {
    Name               = "kp-nat-us-east-1a"
    "nuv.dev/resource" = "elastic-ip/nat-us-east-1a"
  }
}

resource "aws_nat_gateway" "us-east-1a" {
  allocation_id = aws_eip.nat-us-east-1a.id
  subnet_id     = aws_subnet.public-us-east-1a.id
  tags = {
    Name               = "kp-us-east-1a"
    "nuv.dev/resource" = "nat-gateway/us-east-1a"
  }
  depends_on = [aws_internet_gateway.kp]
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.kp.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.kp.id
  }
  tags = {
    Name               = "kp-public"
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

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.kp.id
  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.us-east-1a.id
  }
  tags = {
    Name               = "kp-private"
    "nuv.dev/resource" = "route-table/private"
  }
}

resource "aws_route_table_association" "private-us-east-1a" {
  subnet_id      = aws_subnet.private-us-east-1a.id
  route_table_id = aws_route_table.private.id
}

resource "aws_route_table_association" "private-us-east-1b" {
  subnet_id      = aws_subnet.private-us-east-1b.id
  route_table_id = aws_route_table.private.id
}

resource "aws_security_group" "kp" {
  name        = "nuv-kp"
  description = "nuv cluster kp: control plane and nodes"
  vpc_id      = aws_vpc.kp.id
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
    Name                     = "kp-security-group"
    "karpenter.sh/discovery" = "kp"
    "nuv.dev/resource"       = "security-group/kp"
  }
}

resource "aws_iam_role" "nuv-kp-cluster" {
  name = "nuv-kp-cluster"
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

resource "aws_iam_role_policy_attachment" "nuv-kp-cluster-AmazonEKSClusterPolicy" {
  role       = aws_iam_role.nuv-kp-cluster.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
}

resource "aws_iam_role" "nuv-kp-nodes" {
  name = "nuv-kp-nodes"
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

resource "aws_iam_role_policy_attachment" "nuv-kp-nodes-AmazonEC2ContainerRegistryReadOnly" {
  role       = aws_iam_role.nuv-kp-nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"
}

resource "aws_iam_role_policy_attachment" "nuv-kp-nodes-AmazonEKSWorkerNodePolicy" {
  role       = aws_iam_role.nuv-kp-nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
}

resource "aws_iam_role_policy_attachment" "nuv-kp-nodes-AmazonEKS_CNI_Policy" {
  role       = aws_iam_role.nuv-kp-nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
}

resource "aws_eks_cluster" "kp" {
  name     = "kp"
  version  = "1.35"
  role_arn = aws_iam_role.nuv-kp-cluster.arn
  vpc_config {
    subnet_ids              = [aws_subnet.private-us-east-1a.id, aws_subnet.private-us-east-1b.id, aws_subnet.public-us-east-1a.id, aws_subnet.public-us-east-1b.id]
    security_group_ids      = [aws_security_group.kp.id]
    endpoint_public_access  = true
    endpoint_private_access = false
    public_access_cidrs     = ["0.0.0.0/0"]
  }
  depends_on = [aws_iam_role_policy_attachment.nuv-kp-cluster-AmazonEKSClusterPolicy]
}

resource "aws_eks_node_group" "system" {
  cluster_name    = aws_eks_cluster.kp.name
  node_group_name = "system"
  node_role_arn   = aws_iam_role.nuv-kp-nodes.arn
  subnet_ids      = [aws_subnet.private-us-east-1a.id, aws_subnet.private-us-east-1b.id]
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
  depends_on = [aws_iam_role_policy_attachment.nuv-kp-nodes-AmazonEC2ContainerRegistryReadOnly, aws_iam_role_policy_attachment.nuv-kp-nodes-AmazonEKSWorkerNodePolicy, aws_iam_role_policy_attachment.nuv-kp-nodes-AmazonEKS_CNI_Policy, aws_route_table.public, aws_route_table.private]
}

# Karpenter node groups: one EC2NodeClass and one NodePool per group, applied by the
# hashicorp/kubernetes provider (configure it for the cluster). kubernetes_manifest reads each
# kind's schema at plan time, so Karpenter's CRDs (NodePool, NodeClaim, EC2NodeClass) must be on
# the cluster first: Karpenter's chart installs them, and so does "nuv cluster apply".

resource "kubernetes_manifest" "karpenter_ec2nodeclass_burst" {
  manifest = {
    apiVersion = "karpenter.k8s.aws/v1"
    kind       = "EC2NodeClass"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "kp"
        "nuv.dev/nodegroup"            = "burst"
      }
      name = "burst"
    }
    spec = {
      amiSelectorTerms = [{
        alias = "al2023@latest"
      }]
      blockDeviceMappings = [{
        deviceName = "/dev/xvda"
        ebs = {
          deleteOnTermination = true
          encrypted           = true
          volumeSize          = "80Gi"
          volumeType          = "gp3"
        }
        rootVolume = true
      }]
      role = "nuv-kp-nodes"
      securityGroupSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "kp"
        }
      }]
      subnetSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "kp"
        }
      }]
      tags = {
        "nuv.dev/cluster"   = "kp"
        "nuv.dev/nodegroup" = "burst"
        team                = "platform"
      }
    }
  }

  field_manager {
    name            = "nuv"
    force_conflicts = true
  }

  depends_on = [aws_eks_cluster.kp, aws_iam_role.nuv-kp-nodes]
}

resource "kubernetes_manifest" "karpenter_ec2nodeclass_batch" {
  manifest = {
    apiVersion = "karpenter.k8s.aws/v1"
    kind       = "EC2NodeClass"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "kp"
        "nuv.dev/nodegroup"            = "batch"
      }
      name = "batch"
    }
    spec = {
      amiSelectorTerms = [{
        alias = "al2023@latest"
      }]
      role = "nuv-kp-nodes"
      securityGroupSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "kp"
        }
      }]
      subnetSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "kp"
        }
      }]
      tags = {
        "nuv.dev/cluster"   = "kp"
        "nuv.dev/nodegroup" = "batch"
        team                = "platform"
      }
    }
  }

  field_manager {
    name            = "nuv"
    force_conflicts = true
  }

  depends_on = [aws_eks_cluster.kp, aws_iam_role.nuv-kp-nodes]
}

resource "kubernetes_manifest" "karpenter_nodepool_burst" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "kp"
        "nuv.dev/nodegroup"            = "burst"
      }
      name = "burst"
    }
    spec = {
      limits = {
        nodes = 20
      }
      template = {
        metadata = {
          labels = {
            "nuv.dev/nodegroup" = "burst"
            tier                = "burst"
          }
        }
        spec = {
          nodeClassRef = {
            group = "karpenter.k8s.aws"
            kind  = "EC2NodeClass"
            name  = "burst"
          }
          requirements = [{
            key      = "kubernetes.io/os"
            operator = "In"
            values   = ["linux"]
            }, {
            key      = "node.kubernetes.io/instance-type"
            operator = "In"
            values   = ["m6i.large", "c6i.xlarge"]
            }, {
            key      = "karpenter.sh/capacity-type"
            operator = "In"
            values   = ["spot"]
          }]
          taints = [{
            effect = "NoSchedule"
            key    = "burst"
            value  = "true"
          }]
        }
      }
    }
  }

  field_manager {
    name            = "nuv"
    force_conflicts = true
  }

  depends_on = [aws_eks_cluster.kp, aws_iam_role.nuv-kp-nodes, kubernetes_manifest.karpenter_ec2nodeclass_burst]
}

resource "kubernetes_manifest" "karpenter_nodepool_batch" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "kp"
        "nuv.dev/nodegroup"            = "batch"
      }
      name = "batch"
    }
    spec = {
      limits = {
        nodes = 2
      }
      replicas = 2
      template = {
        metadata = {
          labels = {
            "nuv.dev/nodegroup" = "batch"
          }
        }
        spec = {
          nodeClassRef = {
            group = "karpenter.k8s.aws"
            kind  = "EC2NodeClass"
            name  = "batch"
          }
          requirements = [{
            key      = "kubernetes.io/os"
            operator = "In"
            values   = ["linux"]
            }, {
            key      = "node.kubernetes.io/instance-type"
            operator = "In"
            values   = ["r6i.2xlarge"]
            }, {
            key      = "karpenter.sh/capacity-type"
            operator = "In"
            values   = ["on-demand"]
          }]
        }
      }
    }
  }

  field_manager {
    name            = "nuv"
    force_conflicts = true
  }

  depends_on = [aws_eks_cluster.kp, aws_iam_role.nuv-kp-nodes, kubernetes_manifest.karpenter_ec2nodeclass_batch]
}

resource "aws_eks_addon" "coredns" {
  cluster_name                = aws_eks_cluster.kp.name
  addon_name                  = "coredns"
  addon_version               = "v1.12.4-eksbuild.1"
  resolve_conflicts_on_create = "OVERWRITE"
  resolve_conflicts_on_update = "OVERWRITE"
  depends_on                  = [aws_eks_node_group.system]
}

resource "aws_eks_addon" "kube-proxy" {
  cluster_name                = aws_eks_cluster.kp.name
  addon_name                  = "kube-proxy"
  addon_version               = "v1.35.0-eksbuild.3"
  resolve_conflicts_on_create = "OVERWRITE"
  resolve_conflicts_on_update = "OVERWRITE"
  depends_on                  = [aws_eks_node_group.system]
}

resource "aws_eks_addon" "vpc-cni" {
  cluster_name                = aws_eks_cluster.kp.name
  addon_name                  = "vpc-cni"
  addon_version               = "v1.20.4-eksbuild.2"
  resolve_conflicts_on_create = "OVERWRITE"
  resolve_conflicts_on_update = "OVERWRITE"
  depends_on                  = [aws_eks_node_group.system]
}
