# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

variable "region" {
  type        = string
  description = "Region the cluster's resources are created in."
  default     = ""
}

variable "tags" {
  type        = map(string)
  description = "Tags put on every resource (nuv.dev/cluster marks what nuv owns)."
  default = {
    "nuv.dev/cluster" = "tier"
  }
}
