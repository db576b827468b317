# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

terraform {
  required_providers {
    azurerm = {
      source  = "hashicorp/azurerm"
      version = "~> 4.0"
    }
  }
}

provider "azurerm" {
  features {
  }
  subscription_id = "00000000-1111-2222-3333-444444444444"
}

data "azurerm_resource_group" "shared-rg" {
  name = "shared-rg"
}

resource "azurerm_kubernetes_cluster" "prod" {
  name                = "prod"
  location            = var.region
  resource_group_name = data.azurerm_resource_group.shared-rg.name
  dns_prefix          = "prod"
  kubernetes_version  = "1.36"
  sku_tier            = "Standard"
  tags                = var.tags

  default_node_pool {
    name                 = "system"
    vm_size              = "Standard_D4s_v5"
    node_count           = 3
    zones                = ["1", "2"]
    os_disk_size_gb      = 64
    orchestrator_version = "1.36"
  }

  identity {
    type = "SystemAssigned"
  }

  network_profile {
    network_plugin = "kubenet"
    pod_cidr       = "10.244.0.0/16"
    service_cidr   = "10.96.0.0/16"
  }
}

resource "azurerm_kubernetes_cluster_node_pool" "batch" {
  name                  = "batch"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.prod.id
  mode                  = "User"
  vm_size               = "Standard_F4s_v2"
  auto_scaling_enabled  = true
  min_count             = 0
  max_count             = 10
  zones                 = ["1", "2"]
  node_labels = {
    workload = "batch"
  }
  orchestrator_version = "1.36"
  priority             = "Spot"
  eviction_policy      = "Delete"
  spot_max_price       = -1
  tags                 = var.tags
}

output "kube_config" {
  value     = azurerm_kubernetes_cluster.prod.kube_config_raw
  sensitive = true
}
