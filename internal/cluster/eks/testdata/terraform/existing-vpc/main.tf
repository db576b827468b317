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
  host                   = aws_eks_cluster.lab.endpoint
  cluster_ca_certificate = base64decode(aws_eks_cluster.lab.certificate_authority[0].data)
  exec {
    api_version = "client.authentication.k8s.io/v1"
    command     = "nuv"
    args        = ["-eks-token", "--cluster", "lab"]
  }
}

resource "aws_iam_role" "nuv-lab-cluster" {
  name = "nuv-lab-cluster"
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

resource "aws_iam_role_policy_attachment" "nuv-lab-cluster-AmazonEKSClusterPolicy" {
  role       = aws_iam_role.nuv-lab-cluster.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
}

resource "aws_iam_role" "nuv-lab-nodes" {
  name = "nuv-lab-nodes"
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

resource "aws_iam_role_policy_attachment" "nuv-lab-nodes-AmazonEC2ContainerRegistryReadOnly" {
  role       = aws_iam_role.nuv-lab-nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"
}

resource "aws_iam_role_policy_attachment" "nuv-lab-nodes-AmazonEKSWorkerNodePolicy" {
  role       = aws_iam_role.nuv-lab-nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
}

resource "aws_iam_role_policy_attachment" "nuv-lab-nodes-AmazonEKS_CNI_Policy" {
  role       = aws_iam_role.nuv-lab-nodes.name
  policy_arn = "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
}

resource "aws_eks_cluster" "lab" {
  name     = "lab"
  version  = "1.36"
  role_arn = aws_iam_role.nuv-lab-cluster.arn
  vpc_config {
    subnet_ids              = ["subnet-0aaa", "subnet-0bbb"]
    endpoint_public_access  = true
    endpoint_private_access = false
    public_access_cidrs     = ["0.0.0.0/0"]
  }
  depends_on = [aws_iam_role_policy_attachment.nuv-lab-cluster-AmazonEKSClusterPolicy]
}

resource "aws_eks_node_group" "workers" {
  cluster_name    = aws_eks_cluster.lab.name
  node_group_name = "workers"
  node_role_arn   = aws_iam_role.nuv-lab-nodes.arn
  subnet_ids      = ["subnet-0aaa", "subnet-0bbb"]
  version         = "1.36"
  instance_types  = ["m6i.large"]
  capacity_type   = "ON_DEMAND"
  ami_type        = "AL2023_x86_64_STANDARD"
  disk_size       = 20
  scaling_config {
    desired_size = 2
    max_size     = 2
    min_size     = 2
  }
  depends_on = [aws_iam_role_policy_attachment.nuv-lab-nodes-AmazonEC2ContainerRegistryReadOnly, aws_iam_role_policy_attachment.nuv-lab-nodes-AmazonEKSWorkerNodePolicy, aws_iam_role_policy_attachment.nuv-lab-nodes-AmazonEKS_CNI_Policy]
}

resource "aws_ec2_tag" "karpenter_discovery_lab" {
  resource_id = aws_eks_cluster.lab.vpc_config[0].cluster_security_group_id
  key         = "karpenter.sh/discovery"
  value       = "lab"
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
        "nuv.dev/cluster"              = "lab"
        "nuv.dev/nodegroup"            = "burst"
      }
      name = "burst"
    }
    spec = {
      amiSelectorTerms = [{
        alias = "al2023@latest"
      }]
      role = "nuv-lab-nodes"
      securityGroupSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "lab"
        }
      }]
      subnetSelectorTerms = [{
        id = "subnet-0aaa"
        }, {
        id = "subnet-0bbb"
      }]
      tags = {
        "nuv.dev/cluster"   = "lab"
        "nuv.dev/nodegroup" = "burst"
      }
    }
  }

  field_manager {
    name            = "nuv"
    force_conflicts = true
  }

  depends_on = [aws_eks_cluster.lab, aws_iam_role.nuv-lab-nodes, aws_ec2_tag.karpenter_discovery_lab]
}

resource "kubernetes_manifest" "karpenter_nodepool_burst" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "lab"
        "nuv.dev/nodegroup"            = "burst"
      }
      name = "burst"
    }
    spec = {
      limits = {
        nodes = 4
      }
      template = {
        metadata = {
          labels = {
            "nuv.dev/nodegroup" = "burst"
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

  depends_on = [aws_eks_cluster.lab, aws_iam_role.nuv-lab-nodes, aws_ec2_tag.karpenter_discovery_lab, kubernetes_manifest.karpenter_ec2nodeclass_burst]
}

resource "aws_eks_addon" "coredns" {
  cluster_name                = aws_eks_cluster.lab.name
  addon_name                  = "coredns"
  addon_version               = "v1.12.4-eksbuild.1"
  resolve_conflicts_on_create = "OVERWRITE"
  resolve_conflicts_on_update = "OVERWRITE"
  depends_on                  = [aws_eks_node_group.workers]
}

resource "aws_eks_addon" "vpc-cni" {
  cluster_name                = aws_eks_cluster.lab.name
  addon_name                  = "vpc-cni"
  addon_version               = "v1.20.4-eksbuild.2"
  resolve_conflicts_on_create = "OVERWRITE"
  resolve_conflicts_on_update = "OVERWRITE"
  depends_on                  = [aws_eks_node_group.workers]
}
