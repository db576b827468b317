# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

# Karpenter node groups: one EC2NodeClass and one NodePool per group, applied by the
# hashicorp/kubernetes provider (configure it for the cluster). kubernetes_manifest reads each
# kind's schema at plan time, so Karpenter's CRDs (NodePool, NodeClaim, EC2NodeClass) must be on
# the cluster first: Karpenter's chart installs them, and so does "nuv cluster apply".

resource "kubernetes_manifest" "karpenter_ec2nodeclass_web" {
  manifest = {
    apiVersion = "karpenter.k8s.aws/v1"
    kind       = "EC2NodeClass"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "dev"
        "nuv.dev/nodegroup"            = "web"
      }
      name = "web"
    }
    spec = {
      amiSelectorTerms = [{
        alias = "al2023@latest"
      }]
      role = "dev-node"
      securityGroupSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "dev"
        }
      }]
      subnetSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "dev"
        }
      }]
      tags = {
        "nuv.dev/cluster"   = "dev"
        "nuv.dev/nodegroup" = "web"
        team                = "platform"
      }
    }
  }

  field_manager {
    name            = "nuv"
    force_conflicts = true
  }

  depends_on = [aws_eks_cluster.main, aws_iam_role.node]
}

resource "kubernetes_manifest" "karpenter_ec2nodeclass_batch" {
  manifest = {
    apiVersion = "karpenter.k8s.aws/v1"
    kind       = "EC2NodeClass"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "dev"
        "nuv.dev/nodegroup"            = "batch"
      }
      name = "batch"
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
          volumeSize          = "100Gi"
          volumeType          = "gp3"
        }
        rootVolume = true
      }]
      role = "dev-node"
      securityGroupSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "dev"
        }
      }]
      subnetSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "dev"
        }
      }]
      tags = {
        "nuv.dev/cluster"   = "dev"
        "nuv.dev/nodegroup" = "batch"
        team                = "platform"
      }
    }
  }

  field_manager {
    name            = "nuv"
    force_conflicts = true
  }

  depends_on = [aws_eks_cluster.main, aws_iam_role.node]
}

resource "kubernetes_manifest" "karpenter_ec2nodeclass_system" {
  manifest = {
    apiVersion = "karpenter.k8s.aws/v1"
    kind       = "EC2NodeClass"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "dev"
        "nuv.dev/nodegroup"            = "system"
      }
      name = "system"
    }
    spec = {
      amiSelectorTerms = [{
        alias = "al2023@latest"
      }]
      role = "dev-node"
      securityGroupSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "dev"
        }
      }]
      subnetSelectorTerms = [{
        tags = {
          "karpenter.sh/discovery" = "dev"
        }
      }]
      tags = {
        "nuv.dev/cluster"   = "dev"
        "nuv.dev/nodegroup" = "system"
        team                = "platform"
      }
    }
  }

  field_manager {
    name            = "nuv"
    force_conflicts = true
  }

  depends_on = [aws_eks_cluster.main, aws_iam_role.node]
}

resource "kubernetes_manifest" "karpenter_nodepool_web" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "dev"
        "nuv.dev/nodegroup"            = "web"
      }
      name = "web"
    }
    spec = {
      limits = {
        nodes = 10
      }
      template = {
        metadata = {
          labels = {
            "nuv.dev/nodegroup" = "web"
            tier                = "web"
          }
        }
        spec = {
          nodeClassRef = {
            group = "karpenter.k8s.aws"
            kind  = "EC2NodeClass"
            name  = "web"
          }
          requirements = [{
            key      = "kubernetes.io/os"
            operator = "In"
            values   = ["linux"]
            }, {
            key      = "node.kubernetes.io/instance-type"
            operator = "In"
            values   = ["m5.large"]
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

  depends_on = [aws_eks_cluster.main, aws_iam_role.node, kubernetes_manifest.karpenter_ec2nodeclass_web]
}

resource "kubernetes_manifest" "karpenter_nodepool_batch" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "dev"
        "nuv.dev/nodegroup"            = "batch"
      }
      name = "batch"
    }
    spec = {
      limits = {
        nodes = 20
      }
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
            values   = ["m5.large", "m6i.large"]
            }, {
            key      = "karpenter.sh/capacity-type"
            operator = "In"
            values   = ["spot"]
          }]
          taints = [{
            effect = "NoSchedule"
            key    = "dedicated"
            value  = "batch"
            }, {
            effect = "NoExecute"
            key    = "spot"
          }]
        }
      }
    }
  }

  field_manager {
    name            = "nuv"
    force_conflicts = true
  }

  depends_on = [aws_eks_cluster.main, aws_iam_role.node, kubernetes_manifest.karpenter_ec2nodeclass_batch]
}

resource "kubernetes_manifest" "karpenter_nodepool_system" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata = {
      labels = {
        "app.kubernetes.io/managed-by" = "nuv"
        "nuv.dev/cluster"              = "dev"
        "nuv.dev/nodegroup"            = "system"
      }
      name = "system"
    }
    spec = {
      limits = {
        nodes = 5
      }
      replicas = 3
      template = {
        metadata = {
          labels = {
            "nuv.dev/nodegroup" = "system"
          }
        }
        spec = {
          nodeClassRef = {
            group = "karpenter.k8s.aws"
            kind  = "EC2NodeClass"
            name  = "system"
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

  depends_on = [aws_eks_cluster.main, aws_iam_role.node, kubernetes_manifest.karpenter_ec2nodeclass_system]
}
