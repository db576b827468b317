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

resource "aws_vpc" "ha" {
  cidr_block           = "10.0.0.0/16"
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags = {
    Name               = "ha"
    "nuv.dev/resource" = "vpc/ha"
  }
}

resource "aws_subnet" "private-us-east-1a" {
  vpc_id                  = aws_vpc.ha.id
  cidr_block              = "10.0.0.0/19"
  availability_zone       = "us-east-1a"
  map_public_ip_on_launch = false
  tags = {
    Name                              = "ha-private-us-east-1a"
    "karpenter.sh/discovery"          = "ha"
    "kubernetes.io/role/internal-elb" = "1"
    "nuv.dev/resource"                = "subnet/private-us-east-1a"
  }
}

resource "aws_subnet" "private-us-east-1b" {
  vpc_id                  = aws_vpc.ha.id
  cidr_block              = "10.0.32.0/19"
  availability_zone       = "us-east-1b"
  map_public_ip_on_launch = false
  tags = {
    Name                              = "ha-private-us-east-1b"
    "karpenter.sh/discovery"          = "ha"
    "kubernetes.io/role/internal-elb" = "1"
    "nuv.dev/resource"                = "subnet/private-us-east-1b"
  }
}

resource "aws_subnet" "public-us-east-1a" {
  vpc_id                  = aws_vpc.ha.id
  cidr_block              = "10.0.128.0/19"
  availability_zone       = "us-east-1a"
  map_public_ip_on_launch = true
  tags = {
    Name                     = "ha-public-us-east-1a"
    "kubernetes.io/role/elb" = "1"
    "nuv.dev/resource"       = "subnet/public-us-east-1a"
  }
}

resource "aws_subnet" "public-us-east-1b" {
  vpc_id                  = aws_vpc.ha.id
  cidr_block              = "10.0.160.0/19"
  availability_zone       = "us-east-1b"
  map_public_ip_on_launch = true
  tags = {
    Name                     = "ha-public-us-east-1b"
    "kubernetes.io/role/elb" = "1"
    "nuv.dev/resource"       = "subnet/public-us-east-1b"
  }
}

resource "aws_internet_gateway" "ha" {
  vpc_id = aws_vpc.ha.id
  tags = {
    Name               = "ha-internet-gateway"
    "nuv.dev/resource" = "internet-gateway/ha"
  }
}

resource "aws_eip" "nat-us-east-1a" {
  domain = "vpc"
  tags = {
    Name               = "ha-nat-us-east-1a"
    "nuv.dev/resource" = "elastic-ip/nat-us-east-1a"
  }
}

resource "aws_nat_gateway" "us-east-1a" {
  allocation_id = aws_eip.nat-us-east-1a.id
  subnet_id     = aws_subnet.public-us-east-1a.id
  tags = {
    Name               = "ha-us-east-1a"
    "nuv.dev/resource" = "nat-gateway/us-east-1a"
  }
  depends_on = [aws_internet_gateway.ha]
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.ha.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.ha.id
  }
  tags = {
    Name               = "ha-public"
    "nuv.dev/resource" = "route-table/public"
  }
}

resource "aws_route_table_association" "public-us-east-1a" {
  subnet_id      = aws_subnet.public-us-east-1a.id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table_association" "public-us-east-1b" {
  subnet_id      = aws_subnet.public-us-east-1b.id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.ha.id
  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.us-east-1a.id
  }
  tags = {
    Name               = "ha-private"
    "nuv.dev/resource" = "route-table/private"
  }
}

resource "aws_route_table_association" "private-us-east-1a" {
  subnet_id      = aws_subnet.private-us-east-1a.id
  route_table_id = aws_route_table.private.id
}

resource "aws_route_table_association" "private-us-east-1b" {
  subnet_id      = aws_subnet.private-us-east-1b.id
  route_table_id = aws_route_table.private.id
}

resource "aws_security_group" "control-plane" {
  name        = "nuv-ha-control-plane"
  description = "nuv cluster ha: control-plane"
  vpc_id      = aws_vpc.ha.id
  tags = {
    Name               = "ha-control-plane"
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
  security_group_id            = aws_security_group.control-plane.id
  ip_protocol                  = "tcp"
  from_port                    = 2379
  to_port                      = 2380
  referenced_security_group_id = aws_security_group.control-plane.id
}

resource "aws_vpc_security_group_ingress_rule" "control-plane_4" {
  security_group_id = aws_security_group.control-plane.id
  ip_protocol       = "tcp"
  from_port         = 6443
  to_port           = 6443
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_vpc_security_group_ingress_rule" "control-plane_5" {
  security_group_id = aws_security_group.control-plane.id
  ip_protocol       = "tcp"
  from_port         = 6443
  to_port           = 6443
  cidr_ipv4         = "10.0.0.0/16"
}

resource "aws_vpc_security_group_egress_rule" "control-plane" {
  security_group_id = aws_security_group.control-plane.id
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_security_group" "machines" {
  name        = "nuv-ha-machines"
  description = "nuv cluster ha: machines"
  vpc_id      = aws_vpc.ha.id
  tags = {
    Name               = "ha-machines"
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
  cidr_ipv4         = "203.0.113.0/24"
}

resource "aws_vpc_security_group_egress_rule" "machines" {
  security_group_id = aws_security_group.machines.id
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

resource "aws_security_group" "workers" {
  name        = "nuv-ha-workers"
  description = "nuv cluster ha: workers"
  vpc_id      = aws_vpc.ha.id
  tags = {
    Name               = "ha-workers"
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
  cidr_ipv4         = "10.0.0.0/16"
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

resource "tls_private_key" "nuv-ha" {
  algorithm = "ED25519"
}

resource "aws_key_pair" "nuv-ha" {
  key_name   = "nuv-ha"
  public_key = tls_private_key.nuv-ha.public_key_openssh
  tags = {
    Name               = "ha-nuv-ha"
    "nuv.dev/resource" = "key-pair/nuv-ha"
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
  instance_type          = "m6i.xlarge"
  subnet_id              = aws_subnet.private-us-east-1a.id
  vpc_security_group_ids = [aws_security_group.control-plane.id, aws_security_group.machines.id]
  key_name               = aws_key_pair.nuv-ha.key_name
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
${trimspace(tls_private_key.nuv-ha.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'ha-control-plane-0' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'ha-control-plane-0'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "ha-control-plane-0"
    "nuv.dev/resource" = "instance/control-plane-0"
    "nuv.dev/role"     = "control-plane"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-control-plane-0.public_key_openssh)
  }
}

resource "tls_private_key" "host-control-plane-1" {
  algorithm = "ED25519"
}

resource "aws_instance" "control-plane-1" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "m6i.xlarge"
  subnet_id              = aws_subnet.private-us-east-1b.id
  vpc_security_group_ids = [aws_security_group.control-plane.id, aws_security_group.machines.id]
  key_name               = aws_key_pair.nuv-ha.key_name
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
${trimspace(tls_private_key.host-control-plane-1.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-control-plane-1.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
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
${trimspace(tls_private_key.nuv-ha.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'ha-control-plane-1' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'ha-control-plane-1'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "ha-control-plane-1"
    "nuv.dev/resource" = "instance/control-plane-1"
    "nuv.dev/role"     = "control-plane"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-control-plane-1.public_key_openssh)
  }
}

resource "tls_private_key" "host-control-plane-2" {
  algorithm = "ED25519"
}

resource "aws_instance" "control-plane-2" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "m6i.xlarge"
  subnet_id              = aws_subnet.private-us-east-1a.id
  vpc_security_group_ids = [aws_security_group.control-plane.id, aws_security_group.machines.id]
  key_name               = aws_key_pair.nuv-ha.key_name
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
${trimspace(tls_private_key.host-control-plane-2.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-control-plane-2.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
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
${trimspace(tls_private_key.nuv-ha.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'ha-control-plane-2' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'ha-control-plane-2'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "ha-control-plane-2"
    "nuv.dev/resource" = "instance/control-plane-2"
    "nuv.dev/role"     = "control-plane"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-control-plane-2.public_key_openssh)
  }
}

resource "tls_private_key" "host-workers-0" {
  algorithm = "ED25519"
}

resource "aws_instance" "workers-0" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "m6i.large"
  subnet_id              = aws_subnet.private-us-east-1a.id
  vpc_security_group_ids = [aws_security_group.machines.id, aws_security_group.workers.id]
  key_name               = aws_key_pair.nuv-ha.key_name
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
${trimspace(tls_private_key.host-workers-0.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-workers-0.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
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
${trimspace(tls_private_key.nuv-ha.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'ha-workers-0' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'ha-workers-0'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "ha-workers-0"
    "nuv.dev/resource" = "instance/workers-0"
    "nuv.dev/role"     = "worker"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-workers-0.public_key_openssh)
  }
}

resource "tls_private_key" "host-workers-1" {
  algorithm = "ED25519"
}

resource "aws_instance" "workers-1" {
  ami                    = data.aws_ami.machine.id
  instance_type          = "m6i.large"
  subnet_id              = aws_subnet.private-us-east-1b.id
  vpc_security_group_ids = [aws_security_group.machines.id, aws_security_group.workers.id]
  key_name               = aws_key_pair.nuv-ha.key_name
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
${trimspace(tls_private_key.host-workers-1.private_key_openssh)}
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' '${trimspace(tls_private_key.host-workers-1.public_key_openssh)}' > /etc/ssh/ssh_host_ed25519_key.pub
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
${trimspace(tls_private_key.nuv-ha.public_key_openssh)}
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# The hostname.
printf '%s\n' 'ha-workers-1' > /etc/hostname
chmod 0644 /etc/hostname
hostname 'ha-workers-1'

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
EOT
  tags = {
    "Name"             = "ha-workers-1"
    "nuv.dev/resource" = "instance/workers-1"
    "nuv.dev/role"     = "worker"
    "nuv.dev/host-key" = trimspace(tls_private_key.host-workers-1.public_key_openssh)
  }
}

resource "aws_lb" "ha" {
  name               = "nuv-ha"
  load_balancer_type = "network"
  internal           = false
  subnets            = [aws_subnet.public-us-east-1a.id, aws_subnet.public-us-east-1b.id]
  tags = {
    Name               = "ha-load-balancer"
    "nuv.dev/resource" = "load-balancer/ha"
  }
}

resource "aws_lb_target_group" "ha-api" {
  name        = "nuv-ha-api"
  protocol    = "TCP"
  port        = 6443
  vpc_id      = aws_vpc.ha.id
  target_type = "instance"
  health_check {
    protocol = "TCP"
  }
  tags = {
    Name               = "ha-ha-api"
    "nuv.dev/resource" = "target-group/ha-api"
  }
}

resource "aws_lb_target_group_attachment" "control-plane-0" {
  target_group_arn = aws_lb_target_group.ha-api.arn
  target_id        = aws_instance.control-plane-0.id
  port             = 6443
}

resource "aws_lb_target_group_attachment" "control-plane-1" {
  target_group_arn = aws_lb_target_group.ha-api.arn
  target_id        = aws_instance.control-plane-1.id
  port             = 6443
}

resource "aws_lb_target_group_attachment" "control-plane-2" {
  target_group_arn = aws_lb_target_group.ha-api.arn
  target_id        = aws_instance.control-plane-2.id
  port             = 6443
}

resource "aws_lb_listener" "api" {
  load_balancer_arn = aws_lb.ha.arn
  protocol          = "TCP"
  port              = 6443
  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.ha-api.arn
  }
}

resource "terraform_data" "bootstrap" {
  triggers_replace = [aws_instance.control-plane-0.id, aws_instance.control-plane-1.id, aws_instance.control-plane-2.id, aws_instance.workers-0.id, aws_instance.workers-1.id]
  provisioner "local-exec" {
    command = "nuv cluster apply -f ${path.module}/ha.yaml --yes"
    environment = {
      NUV_AWS_SSH_KEY = tls_private_key.nuv-ha.private_key_openssh
    }
  }
  depends_on = [aws_instance.control-plane-0, aws_instance.control-plane-1, aws_instance.control-plane-2, aws_instance.workers-0, aws_instance.workers-1, aws_lb_target_group.ha-api, aws_lb_listener.api]
}
