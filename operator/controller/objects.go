package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	whiskv1 "github.com/nuv-dev/nuv/operator/api/v1alpha1"
)

// TemplateHashAnnotation records the inputs of an immutable Job template; a change recreates the Job.
const TemplateHashAnnotation = "nuv.dev/template-hash"

// workload describes the single container of a component.
type workload struct {
	image     string
	replicas  int32
	port      int32
	mountPath string // non-empty for stateful components: the PVC "data" is mounted here
	// env is the container's environment (static: PORT, the port its server must listen on, which
	// nuv's whisk-static image reads; images that ignore it listen where they always do; the
	// controller: its configuration, see controllerEnv)
	env []corev1.EnvVar
	// readiness and liveness are the container's probes (nil: none)
	readiness, liveness *corev1.Probe
	// args are the container's arguments (Redis: --requirepass from the store Secret)
	args []string
}

// secretEnv is a variable set from key of the Whisk's store Secret.
func secretEnv(w *whiskv1.Whisk, name, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: StoreSecretName(w)}, Key: key}}}
}

// couchDBAdminEnv is CouchDB's admin as the couchdb image takes it (COUCHDB_USER and
// COUCHDB_PASSWORD make the admin at start and end the "admin party"), from the store Secret.
func couchDBAdminEnv(w *whiskv1.Whisk) []corev1.EnvVar {
	return []corev1.EnvVar{secretEnv(w, "COUCHDB_USER", CouchDBUserKey), secretEnv(w, "COUCHDB_PASSWORD", CouchDBPasswordKey)}
}

// controllerPort is the port of the controller's API.
const controllerPort = 8080

// controllerEnv is the environment of nuv's whisk-controller (whiskapi.ConfigFromEnv): its API key
// from the auth Secret, the CouchDB and Redis of the sibling components when they are enabled
// (their headless Services), the limit when the spec sets one.
func controllerEnv(w *whiskv1.Whisk) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: "PORT", Value: fmt.Sprint(controllerPort)},
		{Name: "WHISK_AUTH", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: AuthSecretName(w)}, Key: AuthSecretKey}}},
	}
	if w.Spec.CouchDB.Enabled {
		env = append(env, corev1.EnvVar{Name: "WHISK_COUCHDB_URL", Value: fmt.Sprintf("http://%s:%d", CouchDB.ObjectName(w), couchDBPort)},
			corev1.EnvVar{Name: "WHISK_DB", Value: "whisks"},
			secretEnv(w, "WHISK_COUCHDB_USER", CouchDBUserKey), secretEnv(w, "WHISK_COUCHDB_PASSWORD", CouchDBPasswordKey))
	}
	if w.Spec.Redis.Enabled {
		env = append(env, corev1.EnvVar{Name: "WHISK_REDIS_ADDR", Value: fmt.Sprintf("%s:%d", Redis.ObjectName(w), redisPort)},
			secretEnv(w, "WHISK_REDIS_PASSWORD", RedisPasswordKey))
	}
	if n := w.Spec.Controller.RequestsPerMinute; n > 0 {
		env = append(env, corev1.EnvVar{Name: "WHISK_REQUESTS_PER_MINUTE", Value: fmt.Sprint(n)})
	}
	return env
}

// httpProbe probes path on the container's port "main", every field set (the API server's
// defaults included) so that what the server returns equals what the operator wants.
func httpProbe(path string, period, timeout int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("main"), Scheme: corev1.URISchemeHTTP}},
		PeriodSeconds: period, TimeoutSeconds: timeout, SuccessThreshold: 1, FailureThreshold: 3,
	}
}

const (
	redisPort   = 6379
	couchDBPort = 5984
)

func (r *WhiskReconciler) workloadOf(w *whiskv1.Whisk, c Component) workload {
	switch c {
	case Controller:
		// ready: CouchDB and Redis answer (/ready); alive: the server answers (/ping)
		return workload{image: image(w.Spec.Controller.Image, DefaultControllerImage), replicas: replicas(w.Spec.Controller.Replicas, 1),
			port: controllerPort, env: controllerEnv(w), readiness: httpProbe("/ready", 5, 4), liveness: httpProbe("/ping", 10, 2)}
	case Redis:
		// A password (requirepass) whatever the image's defaults (protected mode off included):
		// only clients with the store Secret's password run commands. The redis image and nuv's
		// whisk-redis both take options as arguments.
		return workload{image: image(w.Spec.Redis.Image, DefaultRedisImage), replicas: 1, port: redisPort, mountPath: "/data",
			env: []corev1.EnvVar{secretEnv(w, "REDIS_PASSWORD", RedisPasswordKey)}, args: []string{"--requirepass", "$(REDIS_PASSWORD)"}}
	case CouchDB:
		return workload{image: image(w.Spec.CouchDB.Image, DefaultCouchDBImage), replicas: 1, port: couchDBPort, mountPath: "/opt/couchdb/data",
			env: couchDBAdminEnv(w)}
	default:
		port := w.Spec.Static.Port
		if port == 0 {
			port = DefaultStaticPort
		}
		return workload{image: image(w.Spec.Static.Image, DefaultStaticImage), replicas: replicas(w.Spec.Static.Replicas, 1), port: port,
			env: []corev1.EnvVar{{Name: "PORT", Value: fmt.Sprint(port)}}}
	}
}

func mergeLabels(dst, src map[string]string) map[string]string {
	if dst == nil {
		dst = map[string]string{}
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// setContainer makes the pod spec hold one container named name with the workload's image and
// port, changing only the fields nuv owns so server defaults do not cause an update every reconcile.
func setContainer(ps *corev1.PodSpec, name string, wl workload) {
	i := -1
	for j := range ps.Containers {
		if ps.Containers[j].Name == name {
			i = j
		}
	}
	if i < 0 {
		ps.Containers = append(ps.Containers, corev1.Container{Name: name})
		i = len(ps.Containers) - 1
	}
	ct := &ps.Containers[i]
	ct.Image = wl.image
	want := corev1.ContainerPort{Name: "main", ContainerPort: wl.port, Protocol: corev1.ProtocolTCP}
	if len(ct.Ports) != 1 || ct.Ports[0] != want {
		ct.Ports = []corev1.ContainerPort{want}
	}
	if !envEqual(ct.Env, wl.env) {
		ct.Env = wl.env
	}
	if !slices.Equal(ct.Args, wl.args) {
		ct.Args = wl.args
	}
	if !apiequality.Semantic.DeepEqual(ct.ReadinessProbe, wl.readiness) {
		ct.ReadinessProbe = wl.readiness
	}
	if !apiequality.Semantic.DeepEqual(ct.LivenessProbe, wl.liveness) {
		ct.LivenessProbe = wl.liveness
	}
	if wl.mountPath != "" {
		want := corev1.VolumeMount{Name: "data", MountPath: wl.mountPath}
		if len(ct.VolumeMounts) != 1 || ct.VolumeMounts[0] != want {
			ct.VolumeMounts = []corev1.VolumeMount{want}
		}
	}
}

// envEqual compares environments (a variable from a Secret key included; nil and empty are equal).
func envEqual(a, b []corev1.EnvVar) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Value != b[i].Value || !apiequality.Semantic.DeepEqual(a[i].ValueFrom, b[i].ValueFrom) {
			return false
		}
	}
	return true
}

func mutateDeployment(d *appsv1.Deployment, w *whiskv1.Whisk, c Component, wl workload) {
	d.Labels = mergeLabels(d.Labels, labels(w, c))
	d.Spec.Replicas = &wl.replicas
	if d.Spec.Selector == nil { // immutable after creation
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector(w, c)}
	}
	d.Spec.Template.Labels = mergeLabels(d.Spec.Template.Labels, labels(w, c))
	setContainer(&d.Spec.Template.Spec, string(c), wl)
}

func mutateStatefulSet(s *appsv1.StatefulSet, w *whiskv1.Whisk, c Component, wl workload, store whiskv1.StoreSpec) error {
	s.Labels = mergeLabels(s.Labels, labels(w, c))
	s.Spec.Replicas = &wl.replicas
	if s.CreationTimestamp.IsZero() { // selector, service name and claim templates are immutable
		q, err := storage(store.Storage)
		if err != nil {
			return err
		}
		s.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector(w, c)}
		s.Spec.ServiceName = c.ObjectName(w)
		s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: labels(w, c)},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}},
			},
		}}
		if store.StorageClass != "" {
			s.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = &store.StorageClass
		}
	}
	s.Spec.Template.Labels = mergeLabels(s.Spec.Template.Labels, labels(w, c))
	setContainer(&s.Spec.Template.Spec, string(c), wl)
	return nil
}

func mutateService(svc *corev1.Service, w *whiskv1.Whisk, c Component, wl workload, headless bool) {
	svc.Labels = mergeLabels(svc.Labels, labels(w, c))
	if svc.CreationTimestamp.IsZero() && headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	svc.Spec.Selector = selector(w, c)
	want := corev1.ServicePort{Name: "main", Port: wl.port, TargetPort: intstr.FromInt32(wl.port), Protocol: corev1.ProtocolTCP}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0] != want {
		svc.Spec.Ports = []corev1.ServicePort{want}
	}
}

// InitDatabases are the databases CouchDB's init Job makes: CouchDB's system databases and the
// Whisk's own.
var InitDatabases = []string{"_users", "_replicator", "whisks", "activations", "subjects"}

// WhiskDatabases are the Whisk's own databases among InitDatabases: only the store Secret's admin
// may read or write them (their _security names it as the only member).
var WhiskDatabases = []string{"whisks", "activations", "subjects"}

// initScript waits until the server at URL answers (GET /, which CouchDB and CouchDB-compatible
// servers serve; /_up is CouchDB's alone) and makes sure the store Secret's admin (COUCHDB_USER,
// COUCHDB_PASSWORD) exists: the couchdb image makes it from those variables at start; a server
// still without an admin ("admin party": nuv's whisk-couchdb, pouchdb-server) gets it here,
// through the configuration API. Then, as that admin, it creates each database (201 or 202
// created, 412 there already: anything else fails the Job), makes the admin the only member of
// the Whisk's own databases (so anonymous clients can neither read nor write them) and lists them.
const initScript = `set -eu
url=URL
auth="$COUCHDB_USER:$COUCHDB_PASSWORD"
until curl -sf "$url/" >/dev/null; do echo "waiting for $url"; sleep 2; done
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
if [ "$(status -u "$auth" "$url/_all_dbs")" = 401 ]; then
  for cfg in _config _node/_local/_config; do
    code=$(status -X PUT "$url/$cfg/admins/$COUCHDB_USER" -d "\"$COUCHDB_PASSWORD\"")
    echo "admin $COUCHDB_USER through $cfg: HTTP $code"
    [ "$code" = 200 ] && break
  done
  if [ "$(status -u "$auth" "$url/_all_dbs")" != 200 ]; then
    echo "the server refuses the admin of the store secret and has another: fix or recreate it" >&2; exit 1
  fi
fi
for db in DBS; do
  code=$(status -u "$auth" -X PUT "$url/$db")
  case "$code" in
  201|202|412) echo "database $db: HTTP $code" ;;
  *) echo "create database $db: HTTP $code" >&2; exit 1 ;;
  esac
done
for db in WHISKDBS; do
  code=$(status -u "$auth" -X PUT -H 'Content-Type: application/json' "$url/$db/_security" \
    -d "{\"admins\":{\"names\":[\"$COUCHDB_USER\"],\"roles\":[]},\"members\":{\"names\":[\"$COUCHDB_USER\"],\"roles\":[]}}")
  case "$code" in
  200) echo "database $db: only $COUCHDB_USER" ;;
  *) echo "secure database $db: HTTP $code" >&2; exit 1 ;;
  esac
done
curl -sf -u "$auth" "$url/_all_dbs"
`

// InitScript is the shell script of CouchDB's init Job for the server at url.
func InitScript(url string) string {
	return strings.NewReplacer("URL", url, "WHISKDBS", strings.Join(WhiskDatabases, " "), "DBS", strings.Join(InitDatabases, " ")).Replace(initScript)
}

// initJob is CouchDB's init Job: it waits for the database and creates the system databases and
// the Whisk's.
func initJob(w *whiskv1.Whisk, wl workload) *batchv1.Job {
	url := fmt.Sprintf("http://%s:%d", CouchDB.ObjectName(w), wl.port)
	script := InitScript(url)
	sum := sha256.Sum256([]byte(wl.image + "\n" + script))
	backoff := int32(6)
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: InitJobName(w), Namespace: w.Namespace, Labels: labels(w, CouchDB),
			Annotations: map[string]string{TemplateHashAnnotation: hex.EncodeToString(sum[:8])},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(w, CouchDB)},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers: []corev1.Container{{Name: "init", Image: wl.image, Command: []string{"sh", "-c", script},
						Env: couchDBAdminEnv(w)}},
				},
			},
		},
	}
	return j
}
