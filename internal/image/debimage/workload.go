package debimage

import (
	"context"
	"sort"
)

// WorkloadTag is the tag of the reference workload's images. It is stable (tests/kind/whisk.yaml
// names the images by it); what a build holds is in the image's dev.nuv.key label, and loading a
// new build into a kind node replaces the old one under the same tag.
const WorkloadTag = "v1"

// docs are the files of Debian packages an image does not need.
var docs = []string{"usr/share/doc/*", "usr/share/man/*", "usr/share/info/*", "usr/share/lintian/*"}

// WorkloadImage is one image of the reference workload: built from Debian's packages (Deb) or
// from the project's Go source (Go); exactly one is set.
type WorkloadImage struct {
	Deb *Spec
	Go  *GoSpec
}

// Ref is the image's reference.
func (w WorkloadImage) Ref() string {
	if w.Go != nil {
		return w.Go.Ref()
	}
	return w.Deb.Ref()
}

// Build makes the image (project is the module the Go images are compiled from).
func (w WorkloadImage) Build(ctx context.Context, project string, o Options) (Result, error) {
	if w.Go != nil {
		return BuildGo(ctx, *w.Go, project, o)
	}
	return Build(ctx, *w.Deb, o)
}

// Workload is the reference workload's images (the Whisk's components, operator/controller), by
// component name: controller is nuv's whisk-controller compiled from operator/cmd/whisk-controller,
// redis is Debian's redis-server, static Debian's nginx-light, couchdb pouchdb-server (npm) on
// Debian's nodejs.
func Workload() map[string]WorkloadImage {
	redis, static, couch, ctl := Redis(), Static(), CouchDB(), Controller()
	return map[string]WorkloadImage{
		"controller": {Go: &ctl},
		"redis":      {Deb: &redis},
		"static":     {Deb: &static},
		"couchdb":    {Deb: &couch},
	}
}

// WorkloadNames lists the components Workload has images for, sorted.
func WorkloadNames() []string {
	var names []string
	for n := range Workload() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Controller is nuv's whisk-controller (the Whisk's API: a subset of OpenWhisk's REST API, package
// operator/whiskapi), the operator's default controller image.
func Controller() GoSpec {
	return GoSpec{Repository: "nuv.dev/whisk-controller", Tag: WorkloadTag, Main: "./operator/cmd/whisk-controller"}
}

// Redis is Debian's redis-server listening on 6379 on every address, keeping its data (an
// append-only file and snapshots) in /data, the Whisk's volume. It runs as root, as the pod's
// volume on kind (a host path) belongs to root.
func Redis() Spec {
	return Spec{
		Repository: "nuv.dev/whisk-redis",
		Tag:        WorkloadTag,
		Packages:   []string{"redis-server", "redis-tools"},
		Remove:     docs,
		Entrypoint: []string{"redis-server", "--bind", "0.0.0.0", "--port", "6379", "--protected-mode", "no",
			"--dir", "/data", "--appendonly", "yes", "--save", "60 1", "--daemonize", "no", "--logfile", ""},
		Ports:   []int{6379},
		Volumes: []string{"/data"},
	}
}

// staticConf is nginx's configuration for the Whisk's static component; @PORT@ becomes $PORT.
const staticConf = `# nuv's whisk-static: the Whisk's static files. @PORT@ is set from $PORT by whisk-static.
user www-data;
worker_processes 1;
pid /tmp/nginx.pid;
error_log stderr notice;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /dev/stdout;
    sendfile on;
    server {
        listen @PORT@ default_server;
        root /var/www/whisk;
        index index.html;
        location = /healthz { default_type text/plain; return 200 "ok\n"; }
    }
}
`

// staticEntrypoint starts nginx in the foreground on $PORT (default 80), which the operator sets
// to the Whisk's spec.static.port.
const staticEntrypoint = `#!/bin/sh
set -eu
port="${PORT:-80}"
case "$port" in
''|*[!0-9]*) echo "whisk-static: PORT=$port is not a port number" >&2; exit 2 ;;
esac
sed "s/@PORT@/$port/" /etc/nginx/whisk.conf.in > /tmp/nginx.conf
echo "whisk-static: nginx on port $port"
exec nginx -e stderr -c /tmp/nginx.conf -g 'daemon off;'
`

const staticIndex = `<!doctype html>
<html><head><title>whisk</title></head>
<body><h1>whisk</h1><p>Static files of a Whisk, served by nginx from nuv's whisk-static image.</p></body></html>
`

// Static is Debian's nginx-light serving /var/www/whisk on $PORT (the Whisk's static port).
func Static() Spec {
	return Spec{
		Repository: "nuv.dev/whisk-static",
		Tag:        WorkloadTag,
		Packages:   []string{"nginx-light"},
		Remove:     append(append([]string{}, docs...), "etc/nginx/sites-enabled/*"),
		Files: []File{
			{Path: "/etc/nginx/whisk.conf.in", Data: staticConf},
			{Path: "/usr/local/bin/whisk-static", Mode: 0o755, Data: staticEntrypoint},
			{Path: "/var/www/whisk/index.html", Data: staticIndex},
		},
		Entrypoint: []string{"/usr/local/bin/whisk-static"},
		Env:        []string{"PORT=80"},
		Ports:      []int{80},
	}
}

// couchdbEntrypoint runs pouchdb-server on 5984 with its databases (LevelDB) in the Whisk's volume,
// which is also its working directory (pouchdb-server keeps its config.json and log.txt there).
const couchdbEntrypoint = `#!/bin/sh
set -eu
cd /opt/couchdb/data
exec node ` + NPMPrefix + `/node_modules/pouchdb-server/bin/pouchdb-server --host 0.0.0.0 --port 5984 --dir /opt/couchdb/data
`

// CouchDB is a CouchDB-compatible server: Debian 12 has no CouchDB, so this is pouchdb-server
// 4.2.0 (express-pouchdb: CouchDB's HTTP API for databases, documents, views, replication) on
// Debian's nodejs, storing its databases with LevelDB (leveldown's bundled linux prebuild) in
// /opt/couchdb/data, where the operator mounts the volume. curl is there for the init Job.
func CouchDB() Spec {
	return Spec{
		Repository: "nuv.dev/whisk-couchdb",
		Tag:        WorkloadTag,
		Packages:   []string{"nodejs", "curl"},
		NPM:        []string{"pouchdb-server@4.2.0"},
		Remove:     docs,
		Files:      []File{{Path: "/usr/local/bin/whisk-couchdb", Mode: 0o755, Data: couchdbEntrypoint}},
		Entrypoint: []string{"/usr/local/bin/whisk-couchdb"},
		Ports:      []int{5984},
		Volumes:    []string{"/opt/couchdb/data"},
	}
}
