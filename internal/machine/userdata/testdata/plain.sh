#!/bin/sh
# nuv: user data of a machine of a self-managed cluster. It makes the machine reachable over SSH
# with keys nuv made: its own host key (pinned by nuv) and nuv's client key for root.
set -eu
umask 077

# The machine's host key: the only one sshd offers.
mkdir -p -m 0755 /etc/ssh/sshd_config.d
cat > /etc/ssh/ssh_host_ed25519_key.tmp <<'NUV_EOF'
<the machine's private host key>
NUV_EOF
chmod 0600 /etc/ssh/ssh_host_ed25519_key.tmp
mv -f /etc/ssh/ssh_host_ed25519_key.tmp /etc/ssh/ssh_host_ed25519_key
printf '%s\n' 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIqI4910CfGV/VLbLTy6XXLKZwm/HZQSG/N0iAG0D29c' > /etc/ssh/ssh_host_ed25519_key.pub
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
ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIE5dw6ofRdfVqNUZsNMfszLjYqRtO43ol32D1uPybOU nuv
NUV_EOF
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys

# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
