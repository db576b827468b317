# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

output "endpoint" {
  description = "The HAProxy machine in front of the API servers (port 6443)."
  value       = aws_instance.lb-0.private_ip
}
