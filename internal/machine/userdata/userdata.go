// Package userdata renders the user data nuv gives each machine of a self-managed cluster: one
// `#!/bin/sh` script, which cloud-init runs once on a real EC2 instance and nuv's machine
// containers run the same way (internal/machine/container). The script makes the machine
// reachable the way nuv reaches machines, over SSH with both ends' keys known in advance:
//
//   - the machine's own host key, made by nuv (so nuv can pin it), becomes sshd's only HostKey,
//     through a drop-in in /etc/ssh/sshd_config.d read before any other;
//   - root's authorized_keys holds nuv's client key; password and keyboard-interactive logins
//     are off;
//   - the hostname is set when one is given;
//   - ssh.service is enabled and (re)started.
//
// The private host key is in the script itself and nowhere else: the script never echoes it, and
// nothing here logs it. Then runs an optional fragment of the caller's (Config.Then).
package userdata

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/nuv-dev/nuv/internal/machine"
)

// Config is what one machine's user data says.
type Config struct {
	// Hostname is the machine's hostname ("": left as the machine has it).
	Hostname string
	// HostKey is the machine's own SSH host key (private: it is in the script).
	HostKey *machine.Key
	// AuthorizedKeys are the authorized_keys lines of root (nuv's client key's, from
	// machine.Key.AuthorizedKey); at least one.
	AuthorizedKeys []string
	// Then is a shell fragment run after SSH is set up, under `set -e` ("": none).
	Then string
}

// Paths on the machine the script writes.
const (
	// HostKeyPath is the machine's host key (mode 0600); HostKeyPath+".pub" its public half.
	HostKeyPath = "/etc/ssh/ssh_host_ed25519_key"
	// DropIn is the sshd_config drop-in: sshd keeps the first value of an option it reads, and
	// Debian's sshd_config includes sshd_config.d/*.conf first, so 00- comes before the rest
	// (cloud-init's own is 50-cloud-init.conf).
	DropIn = "/etc/ssh/sshd_config.d/00-nuv.conf"
)

// hostnameRE is a hostname of RFC 1123 labels.
func hostnameRE() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)
}

// Script renders the user data of c.
func Script(c Config) ([]byte, error) {
	if c.HostKey == nil {
		return nil, fmt.Errorf("user data: the machine's host key is required")
	}
	if len(c.AuthorizedKeys) == 0 {
		return nil, fmt.Errorf("user data: at least one authorized key (nuv's client key) is required")
	}
	if c.Hostname != "" && (len(c.Hostname) > 253 || !hostnameRE().MatchString(c.Hostname)) {
		return nil, fmt.Errorf("user data: hostname %q is not a valid hostname (lower-case letters, digits, '-' and '.')", c.Hostname)
	}
	var auth []string
	for i, k := range c.AuthorizedKeys {
		k = strings.TrimSpace(k)
		if _, err := machine.ParsePublicKey(k); err != nil || strings.Contains(k, "\n") {
			return nil, fmt.Errorf("user data: authorized key %d is not one authorized_keys line: %q", i+1, k)
		}
		auth = append(auth, k)
	}
	pemBytes, err := c.HostKey.PrivatePEM("")
	if err != nil {
		return nil, err
	}
	data := map[string]any{
		"Hostname":   c.Hostname,
		"HostKey":    strings.TrimRight(string(pemBytes), "\n"),
		"HostPub":    c.HostKey.AuthorizedKey(""),
		"Authorized": strings.Join(auth, "\n"),
		"KeyPath":    HostKeyPath,
		"DropIn":     DropIn,
		"Then":       strings.TrimRight(c.Then, "\n"),
		"EOF":        heredocEnd(string(pemBytes) + strings.Join(auth, "\n")),
	}
	var b bytes.Buffer
	if err := scriptTmpl().Execute(&b, data); err != nil {
		return nil, fmt.Errorf("user data: %w", err)
	}
	return b.Bytes(), nil
}

// Holes stand, in a Template, for the keys that something other than nuv makes (Terraform's
// tls_private_key): each is an expression of the caller's template language.
type Holes struct {
	// HostKey is the machine's private host key in OpenSSH's format, without a trailing newline.
	HostKey string
	// HostPub is its public half, one authorized_keys line.
	HostPub string
	// Authorized is root's authorized_keys lines.
	Authorized string
}

// Template renders the user data Script renders, with the keys left as holes the caller's
// template language fills in when the machine is made: every literal part of the script goes
// through escape (the language's quoting of literal text), the holes go in as they are. Filled
// with the keys Script was given, it is Script's output byte for byte.
func Template(hostname, then string, h Holes, escape func(string) string) (string, error) {
	if hostname != "" && (len(hostname) > 253 || !hostnameRE().MatchString(hostname)) {
		return "", fmt.Errorf("user data: hostname %q is not a valid hostname (lower-case letters, digits, '-' and '.')", hostname)
	}
	// NUL never occurs in the script, so the markers cannot collide with its text.
	marks := map[string]string{"\x00hostkey\x00": h.HostKey, "\x00hostpub\x00": h.HostPub, "\x00authorized\x00": h.Authorized}
	data := map[string]any{
		"Hostname": hostname, "HostKey": "\x00hostkey\x00", "HostPub": "\x00hostpub\x00", "Authorized": "\x00authorized\x00",
		"KeyPath": HostKeyPath, "DropIn": DropIn, "Then": strings.TrimRight(then, "\n"),
		// keys are base64 and authorized_keys lines hold no "_EOF": Script's delimiter for them
		"EOF": heredocEnd(""),
	}
	var b bytes.Buffer
	if err := scriptTmpl().Execute(&b, data); err != nil {
		return "", fmt.Errorf("user data: %w", err)
	}
	var out strings.Builder
	for rest := b.String(); rest != ""; {
		i := strings.IndexByte(rest, 0)
		if i < 0 {
			out.WriteString(escape(rest))
			break
		}
		j := strings.IndexByte(rest[i+1:], 0) + i + 1
		out.WriteString(escape(rest[:i]))
		out.WriteString(marks[rest[i:j+1]])
		rest = rest[j+1:]
	}
	return out.String(), nil
}

// heredocEnd is a here-document delimiter that no line of body is.
func heredocEnd(body string) string {
	end := "NUV_EOF"
	for strings.Contains(body, end) {
		end += "_"
	}
	return end
}

func scriptTmpl() *template.Template {
	return template.Must(template.New("user-data").Parse(scriptText))
}

const scriptText = `#!/bin/sh
# nuv: user data of a machine of a self-managed cluster. It makes the machine reachable over SSH
# with keys nuv made: its own host key (pinned by nuv) and nuv's client key for root.
set -eu
umask 077

# The machine's host key: the only one sshd offers.
mkdir -p -m 0755 /etc/ssh/sshd_config.d
cat > {{.KeyPath}}.tmp <<'{{.EOF}}'
{{.HostKey}}
{{.EOF}}
chmod 0600 {{.KeyPath}}.tmp
mv -f {{.KeyPath}}.tmp {{.KeyPath}}
printf '%s\n' '{{.HostPub}}' > {{.KeyPath}}.pub
chmod 0644 {{.KeyPath}}.pub

cat > {{.DropIn}}.tmp <<'{{.EOF}}'
# Written by nuv's user data: this machine's own host key only, root by key only.
HostKey {{.KeyPath}}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
{{.EOF}}
chmod 0644 {{.DropIn}}.tmp
mv -f {{.DropIn}}.tmp {{.DropIn}}

# nuv's client key for root.
mkdir -p /root/.ssh
chmod 0700 /root/.ssh
cat > /root/.ssh/authorized_keys.tmp <<'{{.EOF}}'
{{.Authorized}}
{{.EOF}}
chmod 0600 /root/.ssh/authorized_keys.tmp
mv -f /root/.ssh/authorized_keys.tmp /root/.ssh/authorized_keys
{{if .Hostname}}
# The hostname.
printf '%s\n' '{{.Hostname}}' > /etc/hostname
chmod 0644 /etc/hostname
hostname '{{.Hostname}}'
{{end}}
# sshd, on now and at every boot.
mkdir -p /run/sshd
/usr/sbin/sshd -t
systemctl enable ssh.service
systemctl restart ssh.service
{{- if .Then}}

# The caller's own steps.
{{.Then}}
{{- end}}
`
