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

resource "azurerm_resource_group" "az1-rg" {
  name     = "az1-rg"
  location = var.region
  tags     = var.tags
}

resource "azurerm_kubernetes_cluster" "az1" {
  name                = "az1"
  location            = var.region
  resource_group_name = azurerm_resource_group.az1-rg.name
  dns_prefix          = "az1"
  kubernetes_version  = "1.35"
  sku_tier            = "Free"
  tags                = var.tags

  default_node_pool {
    name                 = "system"
    vm_size              = "Standard_D2s_v3"
    node_count           = 1
    orchestrator_version = "1.35"
  }

  identity {
    type = "SystemAssigned"
  }

  network_profile {
    network_plugin      = "azure"
    network_plugin_mode = "overlay"
  }
}

resource "azurerm_kubernetes_cluster_node_pool" "user" {
  name                  = "user"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.az1.id
  mode                  = "User"
  vm_size               = "Standard_D4s_v3"
  node_count            = 2
  node_labels = {
    tier = "app"
  }
  orchestrator_version = "1.35"
  node_taints          = ["dedicated=app:NoSchedule"]
  tags                 = var.tags
}

output "kube_config" {
  value     = azurerm_kubernetes_cluster.az1.kube_config_raw
  sensitive = true
}
