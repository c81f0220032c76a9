package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/reinhq/rein/policy"
	"github.com/reinhq/rein/serve"
)

// kinds are the objects the manifests may hold, decoded into the
// Kubernetes API's own Go types.
var kinds = map[string]func() any{
	"v1/ConfigMap":                  func() any { return new(corev1.ConfigMap) },
	"v1/Service":                    func() any { return new(corev1.Service) },
	"apps/v1/StatefulSet":           func() any { return new(appsv1.StatefulSet) },
	"apps/v1/Deployment":            func() any { return new(appsv1.Deployment) },
	"policy/v1/PodDisruptionBudget": func() any { return new(policyv1.PodDisruptionBudget) },
}

// load decodes every object of every YAML file in dir strictly: a
// misspelled or misplaced field, a wrong type or a duplicate key fails, as
// `kubectl apply --validate=strict` would.
func load(t *testing.T, dir string) []any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		t.Fatalf("no manifests in %s", dir)
	}
	var objs []any
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(src), -1) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj, err := decode([]byte(doc))
			if err != nil {
				t.Errorf("%s, document %d: %v", f, i+1, err)
				continue
			}
			objs = append(objs, obj)
		}
	}
	return objs
}

func decode(doc []byte) (any, error) {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, err
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return nil, err
	}
	newObj, ok := kinds[tm.APIVersion+"/"+tm.Kind]
	if !ok {
		return nil, fmt.Errorf("unexpected object %s %s", tm.APIVersion, tm.Kind)
	}
	// Case-sensitive, unlike encoding/json: "mountpath" is not "mountPath".
	obj := newObj()
	strict, err := sigsjson.UnmarshalStrict(js, obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("%s: %w", tm.Kind, errors.Join(strict...))
	}
	return obj, nil
}

func find[T any](objs []any) []*T {
	var out []*T
	for _, o := range objs {
		if x, ok := o.(*T); ok {
			out = append(out, x)
		}
	}
	return out
}

// checkPod holds what every rein pod must satisfy: a non-root user, a
// read-only root filesystem, a data volume, the policy from its ConfigMap,
// probes on the API's port, and environment for every $(VAR) in its args.
func checkPod(t *testing.T, objs []any, name string, pod corev1.PodTemplateSpec, selector *metav1.LabelSelector, claims []corev1.PersistentVolumeClaim) {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("%s: selector %v does not select the pod's labels %v (%v)", name, selector, pod.Labels, err)
	}
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 || sc.FSGroup == nil {
		t.Errorf("%s: the pod must run as a non-root user with an fsGroup for its volume: %+v", name, sc)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, c := range claims {
		volumes[c.Name] = corev1.Volume{Name: c.Name}
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want rein alone", name, len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image, ":") {
		t.Errorf("%s: image %q must name a release tag", name, c.Image)
	}
	csc := c.SecurityContext
	if csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem ||
		csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation ||
		csc.Capabilities == nil || !slices.Contains(csc.Capabilities.Drop, "ALL") {
		t.Errorf("%s: the container needs readOnlyRootFilesystem, no privilege escalation and no capabilities: %+v", name, csc)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["http"] != 8750 {
		t.Errorf("%s: port http = %d, want 8750", name, ports["http"])
	}
	for probe, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.StrVal != "http" {
			t.Errorf("%s: %s probe must GET on port http: %+v", name, probe, p)
		}
	}
	if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("%s: readiness probe on %s, want /readyz (ready once a policy is loaded)", name, c.ReadinessProbe.HTTPGet.Path)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("%s: volume mount %s names no volume", name, m.Name)
		}
		mounts[m.MountPath] = m.Name
	}
	if v, ok := volumes[mounts["/tmp"]]; !ok || v.EmptyDir == nil {
		t.Errorf("%s: /tmp must be an emptyDir: SQLite writes its temporary files there and the root filesystem is read-only", name)
	}
	if mounts["/var/lib/rein"] == "" {
		t.Errorf("%s: nothing is mounted on the data directory /var/lib/rein (the root filesystem is read-only)", name)
	}
	pv, ok := volumes[mounts["/etc/rein/policy"]]
	if !ok || pv.ConfigMap == nil {
		t.Fatalf("%s: /etc/rein/policy must be a ConfigMap volume", name)
	}
	if i := slices.Index(c.Args, "--policy"); i < 0 || i+1 == len(c.Args) || c.Args[i+1] != "/etc/rein/policy/policy.yaml" {
		t.Errorf("%s: args %q must name --policy /etc/rein/policy/policy.yaml", name, c.Args)
	}
	var cm *corev1.ConfigMap
	for _, x := range find[corev1.ConfigMap](objs) {
		if x.Name == pv.ConfigMap.Name {
			cm = x
		}
	}
	if cm == nil {
		t.Fatalf("%s: ConfigMap %s is not among the manifests", name, pv.ConfigMap.Name)
	}
	if _, err := policy.Compile([]byte(cm.Data["policy.yaml"])); err != nil {
		t.Errorf("ConfigMap %s: policy.yaml does not compile: %v", cm.Name, err)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for _, a := range c.Args {
		for _, m := range regexp.MustCompile(`\$\(([A-Z_]+)\)`).FindAllStringSubmatch(a, -1) {
			if _, ok := env[m[1]]; !ok {
				t.Errorf("%s: argument %q uses $(%s), which the container's environment lacks", name, a, m[1])
			}
		}
	}

	for _, s := range find[corev1.Service](objs) {
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			t.Errorf("Service %s does not select %s's pods", s.Name, name)
		}
		for _, p := range s.Spec.Ports {
			if _, ok := ports[p.TargetPort.StrVal]; !ok {
				t.Errorf("Service %s: target port %q is no port of %s", s.Name, p.TargetPort.String(), name)
			}
		}
	}
}

func TestSQLite(t *testing.T) {
	objs := load(t, "kubernetes/sqlite")
	sets := find[appsv1.StatefulSet](objs)
	if len(sets) != 1 || len(find[appsv1.Deployment](objs)) != 0 {
		t.Fatalf("want one StatefulSet and no Deployment, got %d StatefulSets", len(sets))
	}
	s := sets[0]
	if s.Spec.Replicas == nil || *s.Spec.Replicas != 1 {
		t.Errorf("StatefulSet %s: replicas must be 1 (SQLite has one writer)", s.Name)
	}
	if len(s.Spec.VolumeClaimTemplates) != 1 || s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().IsZero() {
		t.Errorf("StatefulSet %s: want one volume claim with a storage request", s.Name)
	}
	checkPod(t, objs, "StatefulSet "+s.Name, s.Spec.Template, s.Spec.Selector, s.Spec.VolumeClaimTemplates)
	c := s.Spec.Template.Spec.Containers[0]
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	if mounts["/var/lib/rein"] != s.Spec.VolumeClaimTemplates[0].Name {
		t.Errorf("StatefulSet %s: the data directory must be the persistent volume", s.Name)
	}
	if slices.Contains(c.Args, "--db") {
		t.Errorf("StatefulSet %s: --db given; this setup keeps SQLite in the data directory", s.Name)
	}
}

func TestPostgres(t *testing.T) {
	objs := load(t, "kubernetes/postgres")
	deps := find[appsv1.Deployment](objs)
	if len(deps) != 1 || len(find[appsv1.StatefulSet](objs)) != 0 {
		t.Fatalf("want one Deployment and no StatefulSet, got %d Deployments", len(deps))
	}
	d := deps[0]
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("Deployment %s: replicas %v, want several sharing PostgreSQL", d.Name, d.Spec.Replicas)
	}
	checkPod(t, objs, "Deployment "+d.Name, d.Spec.Template, d.Spec.Selector, nil)
	c := d.Spec.Template.Spec.Containers[0]
	if i := slices.Index(c.Args, "--db"); i < 0 || i+1 == len(c.Args) || c.Args[i+1] != "$(REIN_DB)" {
		t.Errorf("Deployment %s: args %q must pass --db $(REIN_DB)", d.Name, c.Args)
	}
	// The database URL and the shared audit key come from a Secret, never
	// from the manifest, and a missing Secret must stop the pod.
	for _, v := range []string{"REIN_DB", "REIN_AUDIT_KEY", "REIN_ADMIN_KEY"} {
		var ref *corev1.SecretKeySelector
		for _, e := range c.Env {
			if e.Name == v && e.Value == "" && e.ValueFrom != nil {
				ref = e.ValueFrom.SecretKeyRef
			}
		}
		if ref == nil || ref.Name == "" || ref.Key == "" || (ref.Optional != nil && *ref.Optional) {
			t.Errorf("Deployment %s: %s must come from a required Secret key", d.Name, v)
		}
	}
	for _, p := range find[policyv1.PodDisruptionBudget](objs) {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("PodDisruptionBudget %s does not select the Deployment's pods", p.Name)
		}
		if p.Spec.MinAvailable == nil || p.Spec.MinAvailable.IntValue() >= int(*d.Spec.Replicas) {
			t.Errorf("PodDisruptionBudget %s: minAvailable %v leaves no pod to move among %d", p.Name, p.Spec.MinAvailable, *d.Spec.Replicas)
		}
	}
}

// TestDecodeIsStrict shows that the checks above can fail: a misspelled
// field and a wrong type are rejected.
func TestDecodeIsStrict(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":           "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {selektor: {a: b}}\n",
		"wrong type":              "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: three}\n",
		"duplicate key":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b, a: c}\n",
		"field in the wrong case": "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {Selector: {a: b}}\n",
		"unknown kind":            "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n",
	} {
		if _, err := decode([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestImageDefaults loads the container image's rein serve settings as
// rein does.
func TestImageDefaults(t *testing.T) {
	cfg, err := serve.LoadConfig("docker/rein.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "0.0.0.0:8750" || cfg.Data != "/var/lib/rein" || cfg.Policy != "/etc/rein/policy.yaml" {
		t.Errorf("image defaults = listen %q data %q policy %q", cfg.Listen, cfg.Data, cfg.Policy)
	}
	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"COPY deploy/docker/rein.yaml /etc/rein/rein.yaml", "EXPOSE 8750", "USER 65532:65532", `VOLUME ["/var/lib/rein"]`, `"--config", "/etc/rein/rein.yaml"`} {
		if !bytes.Contains(df, []byte(want)) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	for _, from := range regexp.MustCompile(`(?m)^FROM\s+(?:--platform=\S+\s+)?(\S+)`).FindAllSubmatch(df, -1) {
		if img := string(from[1]); !strings.Contains(img, ":") || strings.HasSuffix(img, ":latest") {
			t.Errorf("Dockerfile: FROM %s is not pinned to a tag", img)
		}
	}
}
