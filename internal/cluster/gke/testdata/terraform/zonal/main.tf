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

data "google_container_engine_versions" "pinned" {
  location       = var.location
  version_prefix = "1.35."
}

resource "google_container_cluster" "demo" {
  name                     = "demo"
  location                 = var.location
  min_master_version       = data.google_container_engine_versions.pinned.latest_master_version
  remove_default_node_pool = true
  initial_node_count       = 1
  resource_labels          = var.tags
  deletion_protection      = false
}

resource "google_container_node_pool" "web" {
  name       = "web"
  cluster    = google_container_cluster.demo.id
  location   = var.location
  version    = data.google_container_engine_versions.pinned.latest_node_version
  node_count = 2

  node_config {
    machine_type = "e2-standard-4"
    disk_size_gb = 100
    image_type   = "COS_CONTAINERD"
    labels = {
      tier = "web"
    }
    resource_labels = var.tags
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]
  }
}

resource "google_container_node_pool" "batch" {
  name     = "batch"
  cluster  = google_container_cluster.demo.id
  location = var.location
  version  = data.google_container_engine_versions.pinned.latest_node_version

  autoscaling {
    min_node_count = 0
    max_node_count = 5
  }

  node_config {
    machine_type    = "e2-medium"
    disk_size_gb    = 50
    image_type      = "COS_CONTAINERD"
    spot            = true
    resource_labels = var.tags
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]

    taint {
      key    = "batch"
      value  = "true"
      effect = "NO_SCHEDULE"
    }
  }
}
