# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

terraform {
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.0"
    }
  }
}

provider "google" {
  project = var.project
  region  = var.region
}

resource "google_container_cluster" "prod" {
  name                     = "prod"
  location                 = var.location
  node_locations           = ["us-central1-a", "us-central1-b", "us-central1-c"]
  remove_default_node_pool = true
  initial_node_count       = 1
  resource_labels          = var.tags
  deletion_protection      = false

  release_channel {
    channel = "REGULAR"
  }

  ip_allocation_policy {
    cluster_ipv4_cidr_block  = "10.20.0.0/14"
    services_ipv4_cidr_block = "10.24.0.0/20"
  }
}

resource "google_container_node_pool" "system" {
  name           = "system"
  cluster        = google_container_cluster.prod.id
  location       = var.location
  node_locations = ["us-central1-a", "us-central1-b", "us-central1-c"]
  node_count     = 1

  node_config {
    machine_type    = "n2-standard-4"
    disk_size_gb    = 100
    image_type      = "COS_CONTAINERD"
    resource_labels = var.tags
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]
  }
}

resource "google_container_node_pool" "gpu" {
  name           = "gpu"
  cluster        = google_container_cluster.prod.id
  location       = var.location
  node_locations = ["us-central1-b"]
  node_count     = 1

  node_config {
    machine_type    = "g2-standard-8"
    disk_size_gb    = 100
    image_type      = "UBUNTU_CONTAINERD"
    resource_labels = var.tags
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]

    taint {
      key    = "nvidia.com/gpu"
      value  = "present"
      effect = "NO_EXECUTE"
    }
  }
}
