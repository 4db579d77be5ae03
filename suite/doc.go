// Package suite loads golden prompt suites and draws reproducible,
// weighted samples from them.
//
// A suite is a YAML file (the format is documented in
// docs/suite-format.md) that groups prompts into categories. Each category
// has a relative weight, a max_tokens budget and thresholds written in
// tokenpulse's threshold language ("ttft.p95 < 250ms"); the thresholds are
// kept as text here and parsed by package gate. A benchmark run of N
// requests draws a stratified sample: each category gets its share of N by
// weight, prompts are drawn without replacement inside a category, and the
// categories are interleaved so that every stretch of the run sees the same
// mix. The same seed always gives the same sample.
//
// Two suites are built in: "zh-medical" (a Chinese medical triage
// assistant) and "en-assistant" (a general English assistant). Resolve
// accepts either a builtin name or a file path:
//
//	s, err := suite.Resolve("zh-medical", suite.Validate(checkThreshold))
//	if err != nil {
//		return err // e.g. "my.yaml:12: categories[1].weight: must be > 0"
//	}
//	for _, p := range s.Sample(20, 1) {
//		fmt.Println(p.Category, p.ID, p.MaxTokens, p.Text)
//	}
//
// Import builds a suite from real traffic (ShareGPT JSON, JSONL, CSV):
// personal data masked with typed placeholders (Deidentify), exact and
// near duplicates removed, prompts put in categories by length or label,
// weights from the data; Marshal writes it as YAML
// (`tokenpulse suites import`).
//
// Errors in a suite file name the file, the line and the field; all of a
// file's errors are reported at once (joined with errors.Join), and each is
// an *Error.
//
// A *Suite is a plain value: loading never shares state between suites, and
// Sample only reads the suite, so a loaded suite may be sampled from
// several goroutines at once as long as nobody modifies it.
package suite
