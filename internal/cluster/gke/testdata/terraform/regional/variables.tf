# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

variable "region" {
  type        = string
  description = "Region the cluster's resources are created in."
  default     = "us-central1"
}

variable "tags" {
  type        = map(string)
  description = "Tags put on every resource (nuv.dev/cluster marks what nuv owns)."
  default = {
    nuv-cluster = "prod"
  }
}

variable "project" {
  type        = string
  description = "Google Cloud project of the cluster."
  default     = "my-project"
}

variable "location" {
  type        = string
  description = "Zone (a zonal cluster) or region (a regional one) of the cluster."
  default     = "us-central1"
}
