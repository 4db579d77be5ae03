package engine

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// x16WantEnv names, in the child process of TestAgreementWithoutAVX512,
// the kernel the 16-row layouts must be running on.
const x16WantEnv = "TOKENPULSE_TEST_X16_KERNEL"

// TestAgreementWithoutAVX512 runs the llama.cpp agreement tests and the
// repack tests again in a child process with AVX-512 turned off
// (GODEBUG=cpu.avx512f=off, which golang.org/x/sys/cpu honours), so that
// on a machine with AVX-512 VNNI the 16-row layouts' AVX2 kernels carry
// the models as they would on a CPU without it; the child first checks
// that they do.
func TestAgreementWithoutAVX512(t *testing.T) {
	if want := os.Getenv(x16WantEnv); want != "" {
		if rp := quant.Repacked(quant.Q4_0, 16); rp == nil || rp.Name != want {
			t.Fatalf("the 16-row layouts run on %v, want %s", rp, want)
		}
		return
	}
	rp := quant.Repacked(quant.Q4_0, 16)
	if rp == nil || rp.Name != "avx512-vnni" {
		t.Skip("no AVX-512 VNNI on this CPU: every other test already runs what this one would")
	}
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.v",
		"-test.run=^(TestAgreementWithoutAVX512|TestSynthFixtures|TestStoriesQuantised|TestRepackAgrees|TestRepackUsed)$")
	cmd.Env = append(os.Environ(), "GODEBUG=cpu.avx512f=off", x16WantEnv+"=avx2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("with AVX-512 off: %v\n%s", err, out)
	}
	for _, name := range []string{"TestAgreementWithoutAVX512", "TestSynthFixtures", "TestStoriesQuantised", "TestRepackAgrees", "TestRepackUsed"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("with AVX-512 off, %s did not pass:\n%s", name, out)
		}
	}
	t.Logf("with AVX-512 off:\n%s", out)
}
