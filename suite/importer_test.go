package suite

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// importFixture imports testdata/import/NAME and checks that the suite
// writes and reads back unchanged.
func importFixture(t *testing.T, name string, opts ImportOptions) (*Suite, *ImportReport) {
	t.Helper()
	file := filepath.Join("testdata", "import", name)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, rep, err := Import(file, data, opts)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	roundTrip(t, s)
	return s, rep
}

// roundTrip checks that Marshal writes s as a file Parse reads back to s.
func roundTrip(t *testing.T, s *Suite) {
	t.Helper()
	data, err := Marshal(s)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back, err := Parse("imported.yaml", data)
	if err != nil {
		t.Fatalf("the imported suite does not parse: %v\n%s", err, data)
	}
	back.Source = s.Source
	if !reflect.DeepEqual(back, s) {
		t.Fatalf("read back differs:\n got  %+v\n want %+v", back, s)
	}
}

// texts lists the prompts of each category.
func texts(s *Suite) map[string][]string {
	out := map[string][]string{}
	for _, c := range s.Categories {
		for _, p := range c.Prompts {
			t := p.Text
			if p.Conversation() {
				var turns []string
				for _, u := range p.Turns {
					turns = append(turns, u.Text)
				}
				t = "turns: " + strings.Join(turns, " || ")
			}
			out[c.Name] = append(out[c.Name], t)
		}
	}
	return out
}

func problems(rep *ImportReport) []string {
	var out []string
	for _, p := range rep.Problems {
		out = append(out, p.Error())
	}
	return out
}

// checkReport compares the counts of a report.
func checkReport(t *testing.T, rep *ImportReport, rows, bad, prompts, empty, exact, near, kept int, masked MaskCounts) {
	t.Helper()
	got := []int{rep.Rows, rep.BadRows, rep.Prompts, rep.Empty, rep.ExactDuplicates, rep.NearDuplicates, rep.Kept}
	want := []int{rows, bad, prompts, empty, exact, near, kept}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows, bad, prompts, empty, exact, near, kept: got %v, want %v", got, want)
	}
	if !reflect.DeepEqual(rep.Masked, masked) {
		t.Errorf("masked: got %v, want %v", rep.Masked, masked)
	}
}

// noPersonalData fails when any prompt still holds one of the values.
func noPersonalData(t *testing.T, s *Suite, values ...string) {
	t.Helper()
	for _, p := range s.Prompts() {
		for _, v := range values {
			if strings.Contains(p.Text, v) {
				t.Errorf("%s still holds %q: %q", p.ID, v, p.Text)
			}
		}
	}
}

func TestImportJSONL(t *testing.T) {
	s, rep := importFixture(t, "traffic.jsonl", ImportOptions{})
	if rep.Format != FormatJSONL || rep.CategoryBy != CategoryByLength || rep.NearDuplicate != DefaultNearDuplicate {
		t.Errorf("format %q, category by %q, near %v", rep.Format, rep.CategoryBy, rep.NearDuplicate)
	}
	// 18 rows, 4 bad; 14 prompts: 1 blank, 3 exact duplicates (case and
	// punctuation, and two lines whose phone numbers differ), 1 near.
	checkReport(t, rep, 18, 4, 14, 1, 3, 1, 9, MaskCounts{MaskPhone: 4, MaskEmail: 1, MaskID: 1, MaskCard: 1})
	want := []string{
		"testdata/import/traffic.jsonl:9: invalid JSON: invalid character 'h' in literal true (expecting 'r')",
		`testdata/import/traffic.jsonl:13: "prompt" is a number, not a string`,
		"testdata/import/traffic.jsonl:14: messages: no user turn",
		"testdata/import/traffic.jsonl:15: not a JSON object but a list",
	}
	if got := problems(rep); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got  %q\n want %q", got, want)
	}
	got := texts(s)
	wantTexts := map[string][]string{
		"short": {
			"What's the capital of Australia?",
			"我的身份证号是[ID]，手机[PHONE]，为什么实名认证失败？",
			"身份证号110105194912310021填错了一位，系统提示校验失败，怎么改？", // check digit wrong: kept as is
			"Please email me at [EMAIL] or call [PHONE] about order 12345.",
			"Call me on [PHONE] or [PHONE] tomorrow",
		},
		"long": {
			"My card [CARD] was charged twice, and the other card 4111 1111 1111 1112 was charged too. What should I do?", // Luhn fails: kept
			"In 2023 we shipped 1500 units at 3.50 each; how many in 2024 if growth is 12%?",
			"Explain how a heat pump works in winter, including what happens to its efficiency as the outdoor temperature drops below freezing, and whether I need a backup heater for my house.",
		},
	}
	if !reflect.DeepEqual(got["short"], wantTexts["short"]) || !reflect.DeepEqual(got["long"], wantTexts["long"]) || len(got["complex"]) != 1 {
		t.Errorf("prompts:\n got  %q\n want %q and one complex", got, wantTexts)
	}
	noPersonalData(t, s, "11010519491231002X", "13812345678", "jane.doe@example.com", "7946 0958", "4111 1111 1111 1111", "13912345678")

	// The suite: named after the file, categories with the builtin
	// budgets and thresholds, weights from the shares.
	if s.Name != "traffic" || s.Language != "en" {
		t.Errorf("name %q language %q", s.Name, s.Language)
	}
	type cat struct {
		name   string
		weight float64
		max    int
		th     string
		n      int
	}
	var cats []cat
	for _, c := range s.Categories {
		cats = append(cats, cat{c.Name, c.Weight, c.MaxTokens, strings.Join(c.Thresholds, ","), len(c.Prompts)})
	}
	wantCats := []cat{
		{"short", 55.56, 64, "ttft.p95 < 250ms", 5},
		{"long", 33.33, 256, "gap.p95 <= 90ms", 3},
		{"complex", 11.11, 384, "gap.max <= 120ms", 1},
	}
	if !reflect.DeepEqual(cats, wantCats) {
		t.Errorf("categories:\n got  %+v\n want %+v", cats, wantCats)
	}
	if id := s.Categories[0].Prompts[4].ID; id != "short-005" {
		t.Errorf("id %q, want short-005", id)
	}

	// Without near-duplicate removal the heat pump comes twice.
	_, rep = importFixture(t, "traffic.jsonl", ImportOptions{NearDuplicate: -1})
	if rep.NearDuplicates != 0 || rep.Kept != 10 || rep.NearDuplicate != 0 {
		t.Errorf("near off: %d near, %d kept, threshold %v", rep.NearDuplicates, rep.Kept, rep.NearDuplicate)
	}
}

func TestImportShareGPT(t *testing.T) {
	s, rep := importFixture(t, "traffic.json", ImportOptions{})
	// 7 conversations, 3 bad; 4 prompts (one a conversation of two
	// turns), 1 blank.
	checkReport(t, rep, 7, 3, 4, 1, 0, 0, 3, MaskCounts{MaskPhone: 1, MaskEmail: 1, MaskCard: 1})
	want := []string{
		`testdata/import/traffic.json: [2] (line 11): no "prompt", "messages" or "conversations" field`,
		"testdata/import/traffic.json: [3] (line 12): conversations: a string, not a list",
		"testdata/import/traffic.json: [4] (line 13): conversations: no user turn",
	}
	if got := problems(rep); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got  %q\n want %q", got, want)
	}
	// The conversation's length is that of its user turns together (each
	// later turn carries the earlier ones): 17 words, long.
	wantTexts := map[string][]string{
		"short": {"how do I reset my router", "我的银行卡[CARD]被冻结了，另一张6222021234567891234没问题，怎么办？"},
		"long":  {"turns: How do I reset my router? || It still does not work. Call me at [PHONE] or write to [EMAIL]"},
	}
	if got := texts(s); !reflect.DeepEqual(got, wantTexts) {
		t.Errorf("prompts:\n got  %q\n want %q", got, wantTexts)
	}

	// First turns only: the follow-up goes.
	s, rep = importFixture(t, "traffic.json", ImportOptions{FirstTurnOnly: true, Format: FormatShareGPT})
	if rep.Prompts != 4 || rep.Kept != 2 || len(s.Prompts()) != 2 {
		t.Errorf("first turns: %d prompts, %d kept", rep.Prompts, rep.Kept)
	}

	// Split: each user turn a prompt, the follow-up one of its own and
	// the second router question a duplicate of the first.
	s, rep = importFixture(t, "traffic.json", ImportOptions{SplitTurns: true})
	checkReport(t, rep, 7, 3, 5, 1, 1, 0, 3, MaskCounts{MaskPhone: 1, MaskEmail: 1, MaskCard: 1})
	if got := texts(s)["short"]; len(got) != 3 || got[1] != "It still does not work. Call me at [PHONE] or write to [EMAIL]" {
		t.Errorf("split: %q", got)
	}
}

func TestImportShareGPTBroken(t *testing.T) {
	data := "[\n" +
		`{"conversations": [{"from": "human", "value": "What is a heat pump?"}]},` + "\n" +
		`{"conversations": [}` + "\n" +
		`{"conversations": [{"from": "human", "value": "never read"}]}]`
	s, rep, err := Import("broken.json", []byte(data), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Prompts()) != 1 || rep.Rows != 2 || rep.BadRows != 1 {
		t.Errorf("%d prompts, %d rows, %d bad", len(s.Prompts()), rep.Rows, rep.BadRows)
	}
	if got := problems(rep); len(got) != 1 || !strings.HasPrefix(got[0], "broken.json: [1] (line 3): invalid JSON, the rest of the file is not read: ") {
		t.Errorf("problems %q", got)
	}
	if _, _, err := Import("obj.json", []byte(`{"a": 1`), ImportOptions{Format: FormatShareGPT}); err == nil || !strings.Contains(err.Error(), "not a JSON array") {
		t.Errorf("not an array: got %v", err)
	}
}

func TestImportCSV(t *testing.T) {
	s, rep := importFixture(t, "traffic.csv", ImportOptions{})
	// 9 records, 2 bad (a stray quote, a missing column); 7 prompts: 1
	// blank, 1 exact duplicate. No "label" column: by length.
	checkReport(t, rep, 9, 2, 7, 1, 1, 0, 5, MaskCounts{MaskPhone: 1, MaskID: 1, MaskCard: 1})
	want := []string{
		`testdata/import/traffic.csv:6: bare " in non-quoted-field`,
		"testdata/import/traffic.csv:7: 1 fields, no prompt column (column 2)",
	}
	if got := problems(rep); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got  %q\n want %q", got, want)
	}
	if rep.CategoryBy != CategoryByLength || len(s.Categories) != 1 {
		t.Errorf("category by %q, %d categories", rep.CategoryBy, len(s.Categories))
	}
	wantTexts := []string{
		"How do I get a refund?",
		"Is my card [CARD] still valid?",
		"My SSN is [ID], can you update my tax form?",
		"Multi-line question:\ncan you ship to my office? The number is [PHONE]",
		"What are your opening hours on Sunday?",
	}
	if got := texts(s)["short"]; !reflect.DeepEqual(got, wantTexts) {
		t.Errorf("prompts:\n got  %q\n want %q", got, wantTexts)
	}

	// By the intent column: one category per label, weights by share;
	// a row without a label is unlabelled.
	s, rep = importFixture(t, "traffic.csv", ImportOptions{LabelField: "intent"})
	if rep.CategoryBy != CategoryByLabel {
		t.Errorf("category by %q", rep.CategoryBy)
	}
	var got []string
	for _, c := range s.Categories {
		got = append(got, c.Name)
		if c.MaxTokens != 0 || len(c.Thresholds) != 0 {
			t.Errorf("%s: a label category has no budget (%d) or thresholds (%q)", c.Name, c.MaxTokens, c.Thresholds)
		}
		if want := 100 * float64(len(c.Prompts)) / 5; c.Weight != want {
			t.Errorf("%s: weight %v, want %v", c.Name, c.Weight, want)
		}
	}
	if want := []string{"billing", "account", "shipping", "unlabelled"}; !reflect.DeepEqual(got, want) {
		t.Errorf("categories %q, want %q", got, want)
	}
	// Asked to categorise by length though labels are there.
	s, _ = importFixture(t, "traffic.csv", ImportOptions{LabelField: "intent", CategoryBy: CategoryByLength})
	if len(s.Categories) != 1 || s.Categories[0].Name != "short" {
		t.Errorf("by length: %d categories", len(s.Categories))
	}
}

func TestImportCSVColumns(t *testing.T) {
	// A question column stands in for prompt; a TSV file is read with
	// tabs; labels are made names.
	data := "Question\tTopic\nWhere is my parcel?\tOrder Status\nHow do I pay?\t \n"
	s, rep, err := Import("q.tsv", []byte(data), ImportOptions{LabelField: "topic"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != FormatCSV || len(s.Categories) != 2 || s.Categories[0].Name != "Order-Status" || s.Categories[1].Name != "unlabelled" {
		t.Errorf("format %q, categories %+v", rep.Format, s.Categories)
	}
	roundTrip(t, s)
	// No prompt column: an error naming the header.
	_, _, err = Import("x.csv", []byte("id,body\n1,hello\n"), ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), `x.csv:1: no prompt column "prompt"`) || errors.Is(err, ErrNoPrompts) {
		t.Errorf("got %v", err)
	}
	// A named prompt column that is not there.
	_, _, err = Import("x.csv", []byte("id,question\n1,hello\n"), ImportOptions{PromptField: "body"})
	if err == nil || !strings.Contains(err.Error(), `no prompt column "body"`) {
		t.Errorf("got %v", err)
	}
}

func TestImportMessages(t *testing.T) {
	data := `{"messages": [{"role": "user", "content": [{"type": "text", "text": "What is in"}, {"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "this picture?"}]}, {"role": "assistant", "content": "A cat."}, {"role": "user", "content": "Is it a Maine Coon?"}], "label": "vision"}
{"messages": [{"role": "user", "content": 7}]}
{"messages": "hi"}
{"conversations": [{"from": "human", "value": "ShareGPT in JSONL"}], "label": 3}
{"prompt": "two"} {"prompt": "values"}
`
	s, rep, err := Import("m.jsonl", []byte(data), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"vision": {"turns: What is in\nthis picture? || Is it a Maine Coon?"},
		"3":      {"ShareGPT in JSONL"},
	}
	if got := texts(s); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	wantProblems := []string{
		`m.jsonl:2: messages: [0]: the user's "content" is not text`,
		"m.jsonl:3: messages: a string, not a list",
		"m.jsonl:5: invalid JSON: more than one value on the line",
	}
	if got := problems(rep); !reflect.DeepEqual(got, wantProblems) {
		t.Errorf("problems:\n got  %q\n want %q", got, wantProblems)
	}
	s, _, err = Import("m.jsonl", []byte(data), ImportOptions{FirstTurnOnly: true})
	if err != nil || len(s.Prompts()) != 2 {
		t.Errorf("first turns: %v, %d prompts", err, len(s.Prompts()))
	}
}

func TestImportNoUsableRow(t *testing.T) {
	for name, data := range map[string]string{
		"bad.jsonl":   "not json\n{\"prompt\": 1}\n\n[]\n",
		"blank.jsonl": "{\"prompt\": \"  \"}\n",
		"empty.csv":   "",
		"header.csv":  "prompt,label\n",
		"empty.json":  "[]",
	} {
		t.Run(name, func(t *testing.T) {
			s, rep, err := Import(name, []byte(data), ImportOptions{})
			if !errors.Is(err, ErrNoPrompts) || s != nil || rep == nil {
				t.Fatalf("got %v, %v, %v; want ErrNoPrompts and a report", s, rep, err)
			}
		})
	}
	_, rep, _ := Import("bad.jsonl", []byte("not json\n{\"prompt\": 1}\n\n[]\n"), ImportOptions{})
	if rep.Rows != 3 || rep.BadRows != 3 || len(rep.Problems) != 3 || rep.Problems[2].Line != 4 {
		t.Errorf("rows %d, bad %d, problems %q", rep.Rows, rep.BadRows, problems(rep))
	}
}

func TestImportOptions(t *testing.T) {
	data := []byte("{\"prompt\": \"hello there\"}\n")
	for _, opts := range []ImportOptions{
		{Format: "xml"},
		{CategoryBy: "colour"},
		{NearDuplicate: 1.5},
		{LongFrom: 10, ComplexFrom: 10},
	} {
		if _, _, err := Import("x.jsonl", data, opts); err == nil || errors.Is(err, ErrNoPrompts) {
			t.Errorf("%+v: got %v, want an error", opts, err)
		}
	}
	s, _, err := Import("x.jsonl", data, ImportOptions{Name: "mine", Language: "fr"})
	if err != nil || s.Name != "mine" || s.Language != "fr" || s.Prompts()[0].Language != "fr" {
		t.Errorf("got %+v, %v", s, err)
	}
}

// TestImportLengthBuckets checks the buckets against the builtin suites:
// their short prompts come out short and their long ones long. (Their
// complex prompts are comparisons, not longer texts: by length they are
// long.)
func TestImportLengthBuckets(t *testing.T) {
	for _, name := range Names() {
		s, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.Categories {
			want := c.Name
			if want == "complex" {
				want = "long"
			}
			for _, p := range c.Prompts {
				if got := lengthCategory(p.Text, DefaultLongFrom, DefaultComplexFrom); got != want {
					t.Errorf("%s %s: %q is %s", name, p.ID, p.Text, got)
				}
			}
		}
	}
	complex := strings.Repeat("word ", 59) + "end"
	if got := lengthCategory(complex, DefaultLongFrom, DefaultComplexFrom); got != "complex" {
		t.Errorf("60 words: %s", got)
	}
	if got := lengthCategory(strings.Repeat("字", 119), DefaultLongFrom, DefaultComplexFrom); got != "long" {
		t.Errorf("119 CJK characters: %s", got)
	}
	if got := lengthCategory(strings.Repeat("字", 29), DefaultLongFrom, DefaultComplexFrom); got != "short" {
		t.Errorf("29 CJK characters: %s", got)
	}
}

func TestImportLanguage(t *testing.T) {
	data := "prompt\n孩子发烧怎么办？\n头痛应该挂哪个科？\nWhat is RSVP?\n"
	s, _, err := Import("zh.csv", []byte(data), ImportOptions{})
	if err != nil || s.Language != "zh-CN" {
		t.Errorf("got %v, %v", s, err)
	}
}

// FuzzImport holds that Import never panics on any input in any format,
// that bad rows are reported rather than fatal, and that whatever suite it
// makes is written as a file Parse reads back unchanged.
func FuzzImport(f *testing.F) {
	for _, name := range []string{"traffic.jsonl", "traffic.json", "traffic.csv"} {
		data, err := os.ReadFile(filepath.Join("testdata", "import", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(0))
	}
	f.Add([]byte("{\"prompt\": \"a\\u0000b\\r\\n\\u2028c \\ufeff\"}\n{\"prompt\": \"\\ud800\"}"), uint8(2))
	f.Add([]byte("prompt,label\n\"x\ny\",\"a b\tc\"\n"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		formats := []string{FormatAuto, FormatShareGPT, FormatJSONL, FormatCSV}
		opts := ImportOptions{Format: formats[int(format)%len(formats)], FirstTurnOnly: format&4 != 0}
		if format&8 != 0 {
			opts.MaxPromptBytes = 16 // rows of 64 bytes: the oversize paths
		}
		s, rep, err := Import("f", data, opts)
		if err != nil {
			return
		}
		if rep.Kept != len(s.Prompts()) || rep.Kept == 0 {
			t.Fatalf("kept %d, suite has %d prompts", rep.Kept, len(s.Prompts()))
		}
		roundTrip(t, s)
	})
}

// FuzzImportCSVRecords holds that the bounded record splitter cuts a CSV
// file where encoding/csv reading it whole does: when the whole file
// reads without error, the same records with the same lines.
func FuzzImportCSVRecords(f *testing.F) {
	f.Add([]byte("prompt,label\n\"x\ny\",\"a \"\"b\"\"\tc\"\n\nlast,\"\"\r\n\"q\",z"))
	f.Add([]byte("a,b\n1,\"2\n\n3\"\n\"\"\"\"\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := csv.NewReader(bytes.NewReader(data))
		whole.FieldsPerRecord = -1
		var want [][]string
		var wantLines []int
		for {
			rec, err := whole.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return // encoding/csv's recovery after an error is its own
			}
			line, _ := whole.FieldPos(0)
			want, wantLines = append(want, rec), append(wantLines, line)
		}
		recs := &csvRecords{br: bufio.NewReader(bytes.NewReader(data)), comma: ',', max: len(data) + 1}
		var got [][]string
		var gotLines []int
		for {
			rec, first, _, long, err := recs.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || long {
				t.Fatalf("record at line %d: %v, long %v", first, err, long)
			}
			cr := csv.NewReader(bytes.NewReader(rec))
			cr.FieldsPerRecord = -1
			fields, err := cr.Read()
			if errors.Is(err, io.EOF) {
				continue
			}
			if err != nil {
				t.Fatalf("record at line %d %q: %v", first, rec, err)
			}
			line, _ := cr.FieldPos(0)
			got, gotLines = append(got, fields), append(gotLines, first+line-1)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotLines, wantLines) {
			t.Fatalf("records %q at lines %v, encoding/csv %q at %v", got, gotLines, want, wantLines)
		}
	})
}

// TestImportOversize holds that a prompt over the bound, and a row over
// RowBytes of it, are refused with their line, and that the rows after
// them are read.
func TestImportOversize(t *testing.T) {
	const bound = 1024 // RowBytes: 4096
	big := strings.Repeat("x", 2*bound)
	huge := strings.Repeat("y ", RowBytes(bound)) // a row of twice RowBytes
	opts := ImportOptions{MaxPromptBytes: bound}
	for _, tc := range []struct {
		file, data string
		want       []string
		rows       int
	}{
		{"a.jsonl", `{"prompt": "What is a heat pump?"}` + "\n" +
			`{"prompt": "` + big + `"}` + "\n" +
			`{"prompt": "` + huge + `"}` + "\n\n" +
			`{"prompt": "How do I bleed a radiator?"}` + "\n",
			[]string{
				"a.jsonl:2: a prompt of 2048 bytes, more than 1024 (--max-prompt-bytes)",
				"a.jsonl:3: line of 8207 bytes, more than 4096 (1024 a prompt, --max-prompt-bytes)",
			}, 4},
		{"a.csv", "id,prompt\n1,What is a heat pump?\n" +
			"2,\"" + big[:bound] + "\n" + big[bound:] + "\"\n" +
			"3,\"" + huge + "\n\"\"quoted\"\"\n" + huge + "\"\n" +
			"4,How do I bleed a radiator?\n",
			[]string{
				"a.csv:3: a prompt of 2049 bytes, more than 1024 (--max-prompt-bytes)",
				"a.csv:5: a record of 16401 bytes, more than 4096 (1024 a prompt, --max-prompt-bytes)",
			}, 4},
		{"a.json", `[{"conversations": [{"from": "human", "value": "What is a heat pump?"}]},` + "\n" +
			`{"conversations": [{"from": "human", "value": "` + big + `"}]},` + "\n" +
			`{"conversations": [{"from": "human", "value": "How do I bleed a radiator?"}]},` + "\n" +
			`{"conversations": [{"from": "human", "value": "` + strings.Repeat(huge, 20) + `"}]},` + "\n" +
			`{"conversations": [{"from": "human", "value": "never read"}]}]`,
			[]string{
				"a.json: [1] (line 2): a prompt of 2048 bytes, more than 1024 (--max-prompt-bytes)",
				"a.json: [3] (line 4): element of more than 4096 bytes (1024 a prompt, --max-prompt-bytes), the rest of the file is not read",
			}, 4},
	} {
		s, rep, err := Import(tc.file, []byte(tc.data), opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got := problems(rep); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: problems:\n got  %q\n want %q", tc.file, got, tc.want)
		}
		if want := []string{"What is a heat pump?", "How do I bleed a radiator?"}; rep.Rows != tc.rows || !reflect.DeepEqual(texts(s)["short"], want) {
			t.Errorf("%s: %d rows, prompts %q; want %d rows, %q", tc.file, rep.Rows, texts(s)["short"], tc.rows, want)
		}
	}
	for _, n := range []int{-1, MaxPromptBytes + 1} {
		if _, _, err := Import("a.jsonl", []byte(`{"prompt": "hi"}`), ImportOptions{MaxPromptBytes: n}); err == nil {
			t.Errorf("MaxPromptBytes %d accepted", n)
		}
	}
}

// endless is a reader of prefix, then n bytes of filler, then suffix,
// made as they are read.
type endless struct {
	prefix, suffix string
	n              int
}

func (e *endless) Read(p []byte) (int, error) {
	switch {
	case e.prefix != "":
		k := copy(p, e.prefix)
		e.prefix = e.prefix[k:]
		return k, nil
	case e.n > 0:
		k := min(len(p), e.n)
		for i := range p[:k] {
			p[i] = 'a' + byte(i%26)
		}
		e.n -= k
		return k, nil
	case e.suffix != "":
		k := copy(p, e.suffix)
		e.suffix = e.suffix[k:]
		return k, nil
	}
	return 0, io.EOF
}

// TestImportReaderBoundedMemory reads a 128 MiB line, a 128 MiB CSV field
// and a 128 MiB ShareGPT element, as a hostile file would hold, and holds
// that the import allocates a bounded part of that, whatever the row's
// size (16 times RowBytes, 32 MiB in all, counting every allocation): the
// row is read past in chunks, never whole.
func TestImportReaderBoundedMemory(t *testing.T) {
	const size = 128 << 20
	for _, tc := range []struct {
		file           string
		prefix, suffix string
	}{
		{"big.jsonl", `{"prompt": "`, "\"}\n" + `{"prompt": "What is a heat pump?"}` + "\n"},
		{"big.csv", "prompt\n\"", "\"\nWhat is a heat pump?\n"},
		{"big.json", `[{"conversations": [{"from": "human", "value": "What is a heat pump?"}]}, {"prompt": "`, `"}]`},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s, rep, err := ImportReader(tc.file, &endless{tc.prefix, tc.suffix, size}, ImportOptions{})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if rep.BadRows != 1 || len(s.Prompts()) != 1 {
			t.Errorf("%s: %d bad rows, %d prompts; want the big row refused and the other kept", tc.file, rep.BadRows, len(s.Prompts()))
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: a row of %d MiB: %.1f MiB allocated, %v", tc.file, size>>20, float64(alloc)/(1<<20), problems(rep))
		if alloc > 16*uint64(RowBytes(DefaultMaxPromptBytes)) {
			t.Errorf("%s: %d bytes allocated reading a row of %d; want at most 16 times RowBytes (%d)", tc.file, alloc, size, RowBytes(DefaultMaxPromptBytes))
		}
	}
}

// An OpenAI messages conversation becomes one prompt whose turns are the
// user's messages (the assistant's are what the target will answer), and
// the suite written loads back as that conversation.
func TestImportMessagesAsTurns(t *testing.T) {
	data := `{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Plan a day in Porto."}, {"role": "assistant", "content": "Start at the Ribeira."}, {"role": "user", "content": "And in the rain?"}, {"role": "assistant", "content": "Museums."}, {"role": "user", "content": "Which one first?"}]}
{"messages": [{"role": "user", "content": "One question only"}, {"role": "user", "content": "   "}]}
`
	s, rep, err := Import("chat.jsonl", []byte(data), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Prompts != 2 || rep.Kept != 2 {
		t.Fatalf("%d prompts, %d kept, want 2 and 2", rep.Prompts, rep.Kept)
	}
	out, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("chat.yaml", out)
	if err != nil {
		t.Fatalf("the suite written does not load: %v\n%s", err, out)
	}
	var conv, single *Prompt
	for _, p := range back.Prompts() {
		if p.Conversation() {
			conv = &p
		} else {
			single = &p
		}
	}
	if conv == nil {
		t.Fatalf("no conversation in\n%s", out)
	}
	var turns []string
	for _, u := range conv.Turns {
		turns = append(turns, u.Text)
	}
	if want := []string{"Plan a day in Porto.", "And in the rain?", "Which one first?"}; !reflect.DeepEqual(turns, want) || conv.Text != want[0] {
		t.Errorf("turns %q, text %q; want %q", turns, conv.Text, want)
	}
	// Its system message is the prompt's system prompt, sent with every
	// turn as the conversation had it.
	if conv.System != "Be brief." {
		t.Errorf("system %q, want %q", conv.System, "Be brief.")
	}
	// A conversation left with one user turn (the other blank) is a
	// single question.
	if single == nil || single.Text != "One question only" || single.System != "" {
		t.Errorf("single question: %+v", single)
	}
}
