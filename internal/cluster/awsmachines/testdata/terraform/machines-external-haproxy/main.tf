# Written by `nuv cluster plan --terraform` from the cluster spec; changes here are overwritten.

terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40"
    }
    tls = {
      source  = "hashicorp/tls"
      version = ">= 4.0"
    }
  }
}

provider "aws" {
  region = var.region
  default_tags {
    tags = var.tags
  }
}

resource "aws_vpc" "tier" {
  cidr_block           = "10.42.0.0/16"
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags = {
    Name               = "tier"
    "nuv.dev/resource" = "vpc/tier"
  }
}

resource "aws_subnet" "private-us-east-1a" {
  vpc_id                  = aws_vpc.tier.id
  cidr_block              = "10.42.0.0/19"
  availability_zone       = "us-east-1a"
  map_public_ip_on_launch = false
  tags = {
    Name                              = "tier-private-us-east-1a"
    "karpenter.sh/discovery"          = "tier"
    "kubernetes.io/role/internal-elb" = "1"
    "nuv.dev/resource"                = "subnet/private-us-east-1a"
  }
}

resource "aws_subnet" "public-us-east-1a" {
  vpc_id                  = aws_vpc.tier.id
  cidr_block              = "10.42.128.0/19"
  availability_zone       = "us-east-1a"
  map_public_ip_on_launch = true
  tags = {
    Name                     = "tier-public-us-east-1a"
    "kubernetes.io/role/elb" = "1"
    "nuv.dev/resource"       = "subnet/public-us-east-1a"
  }
}

resource "aws_internet_gateway" "tier" {
  vpc_id = aws_vpc.tier.id
  tags = {
    Name               = "tier-internet-gateway"
    "nuv.dev/resource" = "internet-gateway/tier"
  }
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.tier.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.tier.id
  }
  tags = {
    Name               = "tier-public"
    "nuv.dev/resource" = "route-table/public"
  }
}

resource "aws_route_table_association" "public-us-east-1a" {
  subnet_id      = aws_subnet.public-us-east-1a.id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.tier.id
  tags = {
    Name               = "tier-private"
    "nuv.dev/resource" = "route-table/private"
  }
}

resource "aws_route_table_association" "private-us-east-1a" {
  subnet_id      = aws_subnet.private-us-east-1a.id
  route_table_id = aws_route_table.private.id
}

resource "aws_security_group" "control-plane" {
  name        = "nuv-tier-control-plane"
  description = "nuv cluster tier: control-plane"
  vpc_id      = aws_vpc.tier.id
  tags = {
    Name               = "tier-control-plane"
    "nuv.dev/resource" = "security-group/control-plane"
  }
}

resource "aws_vpc_security_group_ingress_rule" "control-plane_0" {
  security_group_id            = aws_security_group.control-plane.id
  ip_protocol                  = "tcp"
  from_port                    = 10250
  to_port                      = 10250
  referenced_security_group_id = aws_security_group.control-plane.id
}

resource "aws_vpc_security_group_ingress_rule" "control-plane_1" {
  security_group_id            = aws_security_group.control-plane.id
  ip_protocol                  = "tcp"
  from_port                    = 10257
  to_port                      = 10257
  referenced_security_group_id = aws_security_group.control-plane.id
}

resource "aws_vpc_security_group_ingress_rule" "control-plane_2" {
  security_group_id            = aws_security_group.control-plane.id
  ip_protocol                  = "tcp"
  from_port                    = 10259
  to_port                      = 10259
  referenced_security_group_id = aws_security_group.control-plane.id
}

resource "aws_vpc_security_group_ingress_rule" "control-plane_3" {
  security_group_id = aws_security_group.control-plane.id
  ip_protocol       = "tcp"
  from_port         = 6443
  to_port           = 6443
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_vpc_security_group_egress_rule" "control-plane" {
  security_group_id = aws_security_group.control-plane.id
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_security_group" "etcd" {
  name        = "nuv-tier-etcd"
  description = "nuv cluster tier: etcd"
  vpc_id      = aws_vpc.tier.id
  tags = {
    Name               = "tier-etcd"
    "nuv.dev/resource" = "security-group/etcd"
  }
}

resource "aws_vpc_security_group_ingress_rule" "etcd_0" {
  security_group_id            = aws_security_group.etcd.id
  ip_protocol                  = "tcp"
  from_port                    = 2379
  to_port                      = 2379
  referenced_security_group_id = aws_security_group.control-plane.id
}

resource "aws_vpc_security_group_ingress_rule" "etcd_1" {
  security_group_id            = aws_security_group.etcd.id
  ip_protocol                  = "tcp"
  from_port                    = 2380
  to_port                      = 2380
  referenced_security_group_id = aws_security_group.etcd.id
}

resource "aws_vpc_security_group_egress_rule" "etcd" {
  security_group_id = aws_security_group.etcd.id
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_security_group" "lb" {
  name        = "nuv-tier-lb"
  description = "nuv cluster tier: lb"
  vpc_id      = aws_vpc.tier.id
  tags = {
    Name               = "tier-lb"
    "nuv.dev/resource" = "security-group/lb"
  }
}

resource "aws_vpc_security_group_ingress_rule" "lb_0" {
  security_group_id = aws_security_group.lb.id
  ip_protocol       = "tcp"
  from_port         = 6443
  to_port           = 6443
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_vpc_security_group_egress_rule" "lb" {
  security_group_id = aws_security_group.lb.id
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_security_group" "machines" {
  name        = "nuv-tier-machines"
  description = "nuv cluster tier: machines"
  vpc_id      = aws_vpc.tier.id
  tags = {
    Name               = "tier-machines"
    "nuv.dev/resource" = "security-group/machines"
  }
}

resource "aws_vpc_security_group_ingress_rule" "machines_0" {
  security_group_id            = aws_security_group.machines.id
  ip_protocol                  = "-1"
  referenced_security_group_id = aws_security_group.machines.id
}

resource "aws_vpc_security_group_ingress_rule" "machines_1" {
  security_group_id = aws_security_group.machines.id
  ip_protocol       = "tcp"
  from_port         = 22
  to_port           = 22
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_vpc_security_group_egress_rule" "machines" {
  security_group_id = aws_security_group.machines.id
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_security_group" "workers" {
  name        = "nuv-tier-workers"
  description = "nuv cluster tier: workers"
  vpc_id      = aws_vpc.tier.id
  tags = {
    Name               = "tier-workers"
    "nuv.dev/resource" = "security-group/workers"
  }
}

resource "aws_vpc_security_group_ingress_rule" "workers_0" {
  security_group_id            = aws_security_group.workers.id
  ip_protocol                  = "tcp"
  from_port                    = 10250
  to_port                      = 10250
  referenced_security_group_id = aws_security_group.control-plane.id
}

resource "aws_vpc_security_group_ingress_rule" "workers_1" {
  security_group_id = aws_security_group.workers.id
  ip_protocol       = "tcp"
  from_port         = 10256
  to_port           = 10256
  cidr_ipv4         = "10.42.0.0/16"
}

resource "aws_vpc_security_group_ingress_rule" "workers_2" {
  security_group_id = aws_security_group.workers.id
  ip_protocol       = "tcp"
  from_port         = 30000
  to_port           = 32767
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_vpc_security_group_egress_rule" "workers" {
  security_group_id = aws_security_group.workers.id
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "tls_private_key" "nuv-tier" {
  algorithm = "ED25519"
}

resource "aws_key_pair" "nuv-tier" {
  key_name   = "nuv-tier"
  public_key = tls_private_key.nuv-tier.public_key_openssh
  tags = {
    Name               = "tier-nuv-tier"
    "nuv.dev/resource" = "key-pair/nuv-tier"
  }
}

resource "tls_private_key" "host-control-plane-0" {
  algorithm = "ED25519"
}

data "aws_ami" "machine" {
  most_recent = true
  owners      = ["self"]
  filter {
    name   = "name"
    values = ["nuv-machine-1.36.3"]
  }
}

resource "aws_instance" "control-plane-0" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "m6i.large"
  subnet_id              = aws_subnet.private-us-east-1a.id
  vpc_security_group_ids = [aws_security_group.control-plane.id, aws_security_group.machines.id]
  key_name               = aws_key_pair.nuv-tier.key_name
  source_dest_check      = false
  user_data              = <<EOT
#!/bin/sh
# nuv: user data of a machine of a self-managed cluster. It makes the machine reachable over SSH
# with keys nuv made: its own host key (pinned by nuv) and nuv's client key for root.
set -eu
umask 077

# The machine's host key: the only one sshd offers.
mkdir -p -m 0755 /etc/ssh/sshd_config.d
cat > /etc/ssh/ssh_host_ed25519_key.tmp <<'NUV_EOF'
${trimspace(tls_private_key.host-control-plane-0.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-control-plane-0.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
chmod 0644 /etc/ssh/ssh_host_ed25519_key.pub

cat > /etc/ssh/sshd_config.d/00-nuv.conf.tmp <<'NUV_EOF'
# Written by nuv's user data: this machine's own host key only, root by key only.
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
NUV_EOF
chmod 0644 /etc/ssh/sshd_config.d/00-nuv.conf.tmp
mv -f /etc/ssh/sshd_config.d/00-nuv.conf.tmp /etc/ssh/sshd_config.d/00-nuv.conf

# nuv's client key for root.
mkdir -p /root/.ssh
chmod 0700 /root/.ssh
cat > /root/.ssh/authorized_keys.tmp <<'NUV_EOF'
${trimspace(tls_private_key.nuv-tier.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'tier-control-plane-0' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'tier-control-plane-0'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "tier-control-plane-0"
    "nuv.dev/resource" = "instance/control-plane-0"
    "nuv.dev/role"     = "control-plane"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-control-plane-0.public_key_openssh)
  }
}

resource "tls_private_key" "host-etcd-0" {
  algorithm = "ED25519"
}

resource "aws_instance" "etcd-0" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "m6i.large"
  subnet_id              = aws_subnet.private-us-east-1a.id
  vpc_security_group_ids = [aws_security_group.etcd.id, aws_security_group.machines.id]
  key_name               = aws_key_pair.nuv-tier.key_name
  user_data              = <<EOT
#!/bin/sh
# nuv: user data of a machine of a self-managed cluster. It makes the machine reachable over SSH
# with keys nuv made: its own host key (pinned by nuv) and nuv's client key for root.
set -eu
umask 077

# The machine's host key: the only one sshd offers.
mkdir -p -m 0755 /etc/ssh/sshd_config.d
cat > /etc/ssh/ssh_host_ed25519_key.tmp <<'NUV_EOF'
${trimspace(tls_private_key.host-etcd-0.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-etcd-0.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
chmod 0644 /etc/ssh/ssh_host_ed25519_key.pub

cat > /etc/ssh/sshd_config.d/00-nuv.conf.tmp <<'NUV_EOF'
# Written by nuv's user data: this machine's own host key only, root by key only.
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
NUV_EOF
chmod 0644 /etc/ssh/sshd_config.d/00-nuv.conf.tmp
mv -f /etc/ssh/sshd_config.d/00-nuv.conf.tmp /etc/ssh/sshd_config.d/00-nuv.conf

# nuv's client key for root.
mkdir -p /root/.ssh
chmod 0700 /root/.ssh
cat > /root/.ssh/authorized_keys.tmp <<'NUV_EOF'
${trimspace(tls_private_key.nuv-tier.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'tier-etcd-0' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'tier-etcd-0'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "tier-etcd-0"
    "nuv.dev/resource" = "instance/etcd-0"
    "nuv.dev/role"     = "etcd"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-etcd-0.public_key_openssh)
  }
}

resource "tls_private_key" "host-etcd-1" {
  algorithm = "ED25519"
}

resource "aws_instance" "etcd-1" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "m6i.large"
  subnet_id              = aws_subnet.private-us-east-1a.id
  vpc_security_group_ids = [aws_security_group.etcd.id, aws_security_group.machines.id]
  key_name               = aws_key_pair.nuv-tier.key_name
  user_data              = <<EOT
#!/bin/sh
# nuv: user data of a machine of a self-managed cluster. It makes the machine reachable over SSH
# with keys nuv made: its own host key (pinned by nuv) and nuv's client key for root.
set -eu
umask 077

# The machine's host key: the only one sshd offers.
mkdir -p -m 0755 /etc/ssh/sshd_config.d
cat > /etc/ssh/ssh_host_ed25519_key.tmp <<'NUV_EOF'
${trimspace(tls_private_key.host-etcd-1.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-etcd-1.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
chmod 0644 /etc/ssh/ssh_host_ed25519_key.pub

cat > /etc/ssh/sshd_config.d/00-nuv.conf.tmp <<'NUV_EOF'
# Written by nuv's user data: this machine's own host key only, root by key only.
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
NUV_EOF
chmod 0644 /etc/ssh/sshd_config.d/00-nuv.conf.tmp
mv -f /etc/ssh/sshd_config.d/00-nuv.conf.tmp /etc/ssh/sshd_config.d/00-nuv.conf

# nuv's client key for root.
mkdir -p /root/.ssh
chmod 0700 /root/.ssh
cat > /root/.ssh/authorized_keys.tmp <<'NUV_EOF'
${trimspace(tls_private_key.nuv-tier.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'tier-etcd-1' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'tier-etcd-1'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "tier-etcd-1"
    "nuv.dev/resource" = "instance/etcd-1"
    "nuv.dev/role"     = "etcd"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-etcd-1.public_key_openssh)
  }
}

resource "tls_private_key" "host-etcd-2" {
  algorithm = "ED25519"
}

resource "aws_instance" "etcd-2" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "m6i.large"
  subnet_id              = aws_subnet.private-us-east-1a.id
  vpc_security_group_ids = [aws_security_group.etcd.id, aws_security_group.machines.id]
  key_name               = aws_key_pair.nuv-tier.key_name
  user_data              = <<EOT
#!/bin/sh
# nuv: user data of a machine of a self-managed cluster. It makes the machine reachable over SSH
# with keys nuv made: its own host key (pinned by nuv) and nuv's client key for root.
set -eu
umask 077

# The machine's host key: the only one sshd offers.
mkdir -p -m 0755 /etc/ssh/sshd_config.d
cat > /etc/ssh/ssh_host_ed25519_key.tmp <<'NUV_EOF'
${trimspace(tls_private_key.host-etcd-2.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-etcd-2.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
chmod 0644 /etc/ssh/ssh_host_ed25519_key.pub

cat > /etc/ssh/sshd_config.d/00-nuv.conf.tmp <<'NUV_EOF'
# Written by nuv's user data: this machine's own host key only, root by key only.
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
NUV_EOF
chmod 0644 /etc/ssh/sshd_config.d/00-nuv.conf.tmp
mv -f /etc/ssh/sshd_config.d/00-nuv.conf.tmp /etc/ssh/sshd_config.d/00-nuv.conf

# nuv's client key for root.
mkdir -p /root/.ssh
chmod 0700 /root/.ssh
cat > /root/.ssh/authorized_keys.tmp <<'NUV_EOF'
${trimspace(tls_private_key.nuv-tier.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'tier-etcd-2' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'tier-etcd-2'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "tier-etcd-2"
    "nuv.dev/resource" = "instance/etcd-2"
    "nuv.dev/role"     = "etcd"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-etcd-2.public_key_openssh)
  }
}

resource "tls_private_key" "host-pool-0" {
  algorithm = "ED25519"
}

resource "aws_instance" "pool-0" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "m6i.large"
  subnet_id              = aws_subnet.private-us-east-1a.id
  vpc_security_group_ids = [aws_security_group.machines.id, aws_security_group.workers.id]
  key_name               = aws_key_pair.nuv-tier.key_name
  source_dest_check      = false
  user_data              = <<EOT
#!/bin/sh
# nuv: user data of a machine of a self-managed cluster. It makes the machine reachable over SSH
# with keys nuv made: its own host key (pinned by nuv) and nuv's client key for root.
set -eu
umask 077

# The machine's host key: the only one sshd offers.
mkdir -p -m 0755 /etc/ssh/sshd_config.d
cat > /etc/ssh/ssh_host_ed25519_key.tmp <<'NUV_EOF'
${trimspace(tls_private_key.host-pool-0.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-pool-0.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
chmod 0644 /etc/ssh/ssh_host_ed25519_key.pub

cat > /etc/ssh/sshd_config.d/00-nuv.conf.tmp <<'NUV_EOF'
# Written by nuv's user data: this machine's own host key only, root by key only.
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
NUV_EOF
chmod 0644 /etc/ssh/sshd_config.d/00-nuv.conf.tmp
mv -f /etc/ssh/sshd_config.d/00-nuv.conf.tmp /etc/ssh/sshd_config.d/00-nuv.conf

# nuv's client key for root.
mkdir -p /root/.ssh
chmod 0700 /root/.ssh
cat > /root/.ssh/authorized_keys.tmp <<'NUV_EOF'
${trimspace(tls_private_key.nuv-tier.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'tier-pool-0' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'tier-pool-0'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "tier-pool-0"
    "nuv.dev/resource" = "instance/pool-0"
    "nuv.dev/role"     = "worker"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-pool-0.public_key_openssh)
  }
}

resource "tls_private_key" "host-lb-0" {
  algorithm = "ED25519"
}

resource "aws_instance" "lb-0" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "t3.small"
  subnet_id              = aws_subnet.public-us-east-1a.id
  vpc_security_group_ids = [aws_security_group.lb.id, aws_security_group.machines.id]
  key_name               = aws_key_pair.nuv-tier.key_name
  user_data              = <<EOT
#!/bin/sh
# nuv: user data of a machine of a self-managed cluster. It makes the machine reachable over SSH
# with keys nuv made: its own host key (pinned by nuv) and nuv's client key for root.
set -eu
umask 077

# The machine's host key: the only one sshd offers.
mkdir -p -m 0755 /etc/ssh/sshd_config.d
cat > /etc/ssh/ssh_host_ed25519_key.tmp <<'NUV_EOF'
${trimspace(tls_private_key.host-lb-0.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-lb-0.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
chmod 0644 /etc/ssh/ssh_host_ed25519_key.pub

cat > /etc/ssh/sshd_config.d/00-nuv.conf.tmp <<'NUV_EOF'
# Written by nuv's user data: this machine's own host key only, root by key only.
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
NUV_EOF
chmod 0644 /etc/ssh/sshd_config.d/00-nuv.conf.tmp
mv -f /etc/ssh/sshd_config.d/00-nuv.conf.tmp /etc/ssh/sshd_config.d/00-nuv.conf

# nuv's client key for root.
mkdir -p /root/.ssh
chmod 0700 /root/.ssh
cat > /root/.ssh/authorized_keys.tmp <<'NUV_EOF'
${trimspace(tls_private_key.nuv-tier.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'tier-lb-0' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'tier-lb-0'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "tier-lb-0"
    "nuv.dev/resource" = "instance/lb-0"
    "nuv.dev/role"     = "load-balancer"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-lb-0.public_key_openssh)
  }
}

resource "terraform_data" "bootstrap" {
  triggers_replace = [aws_instance.control-plane-0.id, aws_instance.etcd-0.id, aws_instance.etcd-1.id, aws_instance.etcd-2.id, aws_instance.pool-0.id, aws_instance.lb-0.id]
  provisioner "local-exec" {
    command = "nuv cluster apply -f ${path.module}/tier.yaml --yes"
    environment = {
      NUV_AWS_SSH_KEY = tls_private_key.nuv-tier.private_key_openssh
    }
  }
  depends_on = [aws_instance.control-plane-0, aws_instance.etcd-0, aws_instance.etcd-1, aws_instance.etcd-2, aws_instance.pool-0, aws_instance.lb-0]
}
