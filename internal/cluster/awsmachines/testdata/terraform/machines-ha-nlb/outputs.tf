# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

output "endpoint" {
  description = "The API servers' load balancer (port 6443)."
  value       = aws_lb.ha.dns_name
}
