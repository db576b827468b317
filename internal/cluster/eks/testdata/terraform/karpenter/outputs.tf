# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

output "cluster_name" {
  description = "The EKS cluster's name (nuv -eks-token --cluster takes it)."
  value       = aws_eks_cluster.kp.name
}

output "endpoint" {
  description = "The cluster's API server endpoint."
  value       = aws_eks_cluster.kp.endpoint
}

output "certificate_authority" {
  description = "The cluster's CA, base64 (a kubeconfig's certificate-authority-data)."
  value       = aws_eks_cluster.kp.certificate_authority[0].data
}
