package kubernetes

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// manifests are the files render.sh renders, in its order.
var manifests = []string{"pvc.yaml", "shards-job.yaml", "merge-job.yaml"}

// params reads params.env as render.sh's shell would: NAME=value lines,
// a value in single quotes taken as it is.
func params(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("params.env")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	line := regexp.MustCompile(`^([A-Z0-9_]+)=(.*)$`)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		out[m[1]] = strings.Trim(m[2], "'")
	}
	return out
}

// render substitutes ${NAME} for each parameter, as envsubst with
// render.sh's list does, and fails on a ${NAME} that is no parameter.
func render(t *testing.T, text string, p map[string]string) string {
	t.Helper()
	ref := regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)
	return ref.ReplaceAllStringFunc(text, func(s string) string {
		name := s[2 : len(s)-1]
		v, ok := p[name]
		if !ok {
			t.Errorf("${%s} is no parameter of params.env", name)
		}
		return v
	})
}

// decode strictly decodes one manifest into its Kubernetes type: an
// unknown or misspelt field is an error.
func decode(doc []byte) (any, error) {
	var head struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	var obj any
	switch head.APIVersion + "/" + head.Kind {
	case "batch/v1/Job":
		obj = &batchv1.Job{}
	case "v1/PersistentVolumeClaim":
		obj = &corev1.PersistentVolumeClaim{}
	default:
		return nil, fmt.Errorf("unexpected kind %s %s", head.APIVersion, head.Kind)
	}
	return obj, yaml.UnmarshalStrict(doc, obj)
}

func TestManifestsDecodeStrictly(t *testing.T) {
	p := params(t)
	var jobs []*batchv1.Job
	for _, name := range manifests {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := decode([]byte(render(t, string(b), p)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if j, ok := obj.(*batchv1.Job); ok {
			jobs = append(jobs, j)
		}
	}
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want the shards' and the merge's", len(jobs))
	}
	shards := jobs[0].Spec
	if shards.CompletionMode == nil || *shards.CompletionMode != batchv1.IndexedCompletion {
		t.Error("the shards' Job is not Indexed: its pods get no JOB_COMPLETION_INDEX")
	}
	if shards.Completions == nil || shards.Parallelism == nil || fmt.Sprint(*shards.Completions) != p["SHARDS"] || *shards.Parallelism != *shards.Completions {
		t.Errorf("completions %v, parallelism %v: want both SHARDS=%s", shards.Completions, shards.Parallelism, p["SHARDS"])
	}
	script := strings.Join(shards.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"--shards " + p["SHARDS"], "--start-at " + p["START_AT"], "--rate " + p["RATE"], "$JOB_COMPLETION_INDEX", "--publish " + p["S3_PREFIX"]} {
		if !strings.Contains(script, want) {
			t.Errorf("the shard's command lacks %q:\n%s", want, script)
		}
	}
	merge := jobs[1].Spec.Template.Spec
	if args := merge.Containers[0].Args; len(args) < 2 || args[0] != "merge" || !slices.Contains(args, "/shared/"+p["RUN_ID"]) {
		t.Errorf("the merge step runs %v", args)
	}
	if len(merge.InitContainers) != 1 {
		t.Error("the merge step does not wait for the shards")
	}
}

// TestStrictDecodingCatchesMisspelling shows the check can fail: a
// misspelt field of a real manifest is refused.
func TestStrictDecodingCatchesMisspelling(t *testing.T) {
	b, err := os.ReadFile("shards-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(render(t, string(b), params(t)), "completionMode:", "completionMod:", 1)
	if _, err := decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "completionMod") {
		t.Errorf("a misspelt field decoded: %v", err)
	}
}

// TestRenderScript runs render.sh when envsubst is installed (gettext),
// and decodes what it prints: the shell's substitution agrees with the
// test's.
func TestRenderScript(t *testing.T) {
	if _, err := os.Stat("/usr/bin/envsubst"); err != nil {
		t.Skip("no envsubst (gettext-base): render.sh not run")
	}
	out, err := runRender()
	if err != nil {
		t.Fatalf("render.sh: %v\n%s", err, out)
	}
	docs := bytes.Split(out, []byte("\n---\n"))
	n := 0
	for _, d := range docs {
		d = bytes.TrimPrefix(bytes.TrimSpace(d), []byte("---"))
		if len(bytes.TrimSpace(d)) == 0 {
			continue
		}
		if _, err := decode(d); err != nil {
			t.Errorf("rendered document %d: %v", n, err)
		}
		n++
	}
	if n != len(manifests) {
		t.Errorf("%d documents rendered, want %d", n, len(manifests))
	}
	if bytes.Contains(out, []byte("${")) {
		t.Error("render.sh left a ${...} unsubstituted")
	}
}
