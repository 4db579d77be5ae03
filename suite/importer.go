package suite

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrNoPrompts is returned (wrapped) by Import when the input holds no
// usable prompt: every row was bad, empty or missing.
var ErrNoPrompts = errors.New("no usable prompt")

// Import formats.
const (
	FormatAuto     = "auto"
	FormatShareGPT = "sharegpt"
	FormatJSONL    = "jsonl"
	FormatCSV      = "csv"
)

// Ways to categorise imported prompts.
const (
	CategoryByAuto   = "auto"
	CategoryByLength = "length"
	CategoryByLabel  = "label"
)

// Length buckets of an import by length, in words (a CJK character counts
// as half a word): fewer than DefaultLongFrom words is short, at least
// DefaultComplexFrom is complex, long in between.
const (
	DefaultLongFrom    = 15
	DefaultComplexFrom = 60
)

// ImportOptions configure Import. The zero value imports with the
// defaults.
type ImportOptions struct {
	// Format is FormatAuto (or ""), FormatShareGPT, FormatJSONL or
	// FormatCSV. Auto goes by the file's extension (.jsonl and .ndjson
	// are JSONL, .csv and .tsv CSV), else by the first character: "[" is
	// ShareGPT, "{" JSONL, anything else CSV.
	Format string
	// Name is the suite's name; "" takes the file name without its
	// extension.
	Name string
	// Language is the suite's language tag; "" detects it: zh-CN when
	// most prompts hold Han characters, ja or ko likewise for kana and
	// Hangul, else en.
	Language string
	// CategoryBy is CategoryByLength, CategoryByLabel or CategoryByAuto
	// (or ""): by label when any usable row has the label field, else by
	// length.
	CategoryBy string
	// LabelField names the label field (JSON) or column (CSV); "" is
	// "label".
	LabelField string
	// PromptField names the prompt field (JSON) or column (CSV); "" is
	// "prompt". A CSV file without that column may name it question,
	// text, query, input, instruction, content or message instead.
	PromptField string
	// FirstTurnOnly takes only the first user turn of a conversation
	// (ShareGPT conversations, OpenAI messages); by default a
	// conversation of several user turns becomes one prompt with turns
	// (a multi-turn prompt, sent as the conversation was held).
	FirstTurnOnly bool
	// NearDuplicate is the word-bigram Jaccard similarity at or above
	// which a prompt is dropped as a near duplicate of an earlier one;
	// 0 is DefaultNearDuplicate, a negative value turns near-duplicate
	// removal off.
	NearDuplicate float64
	// LongFrom and ComplexFrom are the length buckets in words; 0 takes
	// DefaultLongFrom and DefaultComplexFrom.
	LongFrom, ComplexFrom int
	// MaxPromptBytes bounds a prompt's text in bytes; 0 is
	// DefaultMaxPromptBytes, at most MaxPromptBytes. A row holding a
	// longer prompt is bad, and a row (a JSONL line, a CSV record, a
	// ShareGPT element) of more than RowBytes(MaxPromptBytes) is bad
	// without being held in memory.
	MaxPromptBytes int
	// SplitTurns makes every user turn of a conversation a prompt of its
	// own (single questions), as imports did before conversations could
	// be written as turns.
	SplitTurns bool
}

// DefaultMaxPromptBytes is the default bound of an imported prompt: 512
// KiB, about 128k tokens of English (some 4 bytes a token) or 170k
// Chinese characters, as much as the 128k-token context windows of most
// served models hold whole. A longer prompt cannot measure their latency;
// for a model with a 1M-token window, raise the bound (MaxPromptBytes).
const DefaultMaxPromptBytes = 512 << 10

// MaxPromptBytes is the most that any prompt or turn of a suite may hold,
// in Import and in Load and Parse: 8 MiB, some 2 million tokens, the
// largest context windows offered.
const MaxPromptBytes = 8 << 20

// RowBytes is the largest row Import reads for a prompt bound of
// maxPrompt: four times as much, room for a conversation's several turns
// and JSON's escapes.
func RowBytes(maxPrompt int) int { return 4 * maxPrompt }

// ImportReport says what Import read, dropped and masked.
type ImportReport struct {
	File       string // the file name given to Import
	Format     string // the format read (auto resolved)
	CategoryBy string // how the prompts were categorised (auto resolved)
	// Rows counts the rows read: JSONL lines that are not blank, CSV
	// records after the header, ShareGPT array elements; BadRows those of
	// them that could not be used.
	Rows, BadRows int
	// Prompts counts the prompts the good rows held (a conversation is
	// one, or one a user turn with SplitTurns), and what became of them: Empty (blank text),
	// ExactDuplicates, NearDuplicates, Kept.
	Prompts, Empty, ExactDuplicates, NearDuplicates, Kept int
	// NearDuplicate is the Jaccard threshold used; 0 when turned off.
	NearDuplicate float64
	// Masked counts the personal data replaced in the kept prompts, by
	// placeholder.
	Masked MaskCounts
	// Problems lists the bad rows, in file order.
	Problems []*ImportProblem
}

// ImportProblem is a row Import could not use.
type ImportProblem struct {
	File string
	// Line is the 1-based line of the row (JSONL, CSV) or of the start of
	// the array element (ShareGPT); 0 when unknown.
	Line int
	// Index is the array index of a ShareGPT element, -1 for JSONL and
	// CSV.
	Index int
	Msg   string
}

// Error formats the problem as "FILE:LINE: MSG", or for a ShareGPT
// element "FILE: [INDEX] (line LINE): MSG".
func (p *ImportProblem) Error() string {
	if p.Index >= 0 {
		if p.Line > 0 {
			return fmt.Sprintf("%s: [%d] (line %d): %s", p.File, p.Index, p.Line, p.Msg)
		}
		return fmt.Sprintf("%s: [%d]: %s", p.File, p.Index, p.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

// importRow is one usable row: its prompts and label.
type importRow struct {
	texts    []string
	label    string
	hasLabel bool
	// conversation: texts are the user turns of one conversation, to be
	// kept together as one prompt's turns.
	conversation bool
	// system is the conversation's system prompt, "" when none.
	system string
}

// importer reads one file.
type importer struct {
	file string
	opts ImportOptions
	rep  *ImportReport
	rows []importRow
}

func (im *importer) bad(line, index int, format string, args ...any) {
	im.rep.BadRows++
	im.rep.Problems = append(im.rep.Problems, &ImportProblem{File: im.file, Line: line, Index: index, Msg: fmt.Sprintf(format, args...)})
}

// Import reads prompts from real traffic and makes a suite of them. file
// names the input in messages and chooses the suite's default name; data
// is its content. Import
//
//  1. reads the rows (ShareGPT JSON, JSONL or CSV; see ImportOptions),
//     reporting each row it cannot use and going on with the rest;
//  2. cleans each prompt (invalid UTF-8 replaced, control characters
//     other than newline and tab removed, trimmed) and drops blank ones;
//  3. replaces personal data with placeholders (Deidentify);
//  4. drops exact and near duplicates, keeping the first (Dedupe);
//  5. puts the prompts in categories by length or label, each weighted by
//     its share of the kept prompts (in percent, four significant digits).
//
// Categories by length are short, long and complex with the budgets and
// thresholds of the builtin suites; categories by label have neither.
// Prompt ids are the category's name and a sequence number. The report
// says what was read, dropped and masked; its Problems are the bad rows.
// When no prompt is left, Import returns the report and an error wrapping
// ErrNoPrompts.
func Import(file string, data []byte, opts ImportOptions) (*Suite, *ImportReport, error) {
	return ImportReader(file, bytes.NewReader(data), opts)
}

// ImportReader is Import reading from r as it goes: it holds one row of the
// input at a time, never more than RowBytes(opts.MaxPromptBytes) of it,
// and the prompts it keeps.
func ImportReader(file string, r io.Reader, opts ImportOptions) (*Suite, *ImportReport, error) {
	if opts.MaxPromptBytes == 0 {
		opts.MaxPromptBytes = DefaultMaxPromptBytes
	}
	if opts.MaxPromptBytes < 1 || opts.MaxPromptBytes > MaxPromptBytes {
		return nil, nil, fmt.Errorf("prompt bound %d bytes: want 1 to %d", opts.MaxPromptBytes, MaxPromptBytes)
	}
	if opts.LabelField == "" {
		opts.LabelField = "label"
	}
	if opts.PromptField == "" {
		opts.PromptField = "prompt"
	}
	if opts.LongFrom == 0 {
		opts.LongFrom = DefaultLongFrom
	}
	if opts.ComplexFrom == 0 {
		opts.ComplexFrom = DefaultComplexFrom
	}
	if opts.LongFrom < 1 || opts.ComplexFrom <= opts.LongFrom {
		return nil, nil, fmt.Errorf("length buckets: want 1 ≤ long (%d) < complex (%d)", opts.LongFrom, opts.ComplexFrom)
	}
	switch opts.NearDuplicate {
	case 0:
		opts.NearDuplicate = DefaultNearDuplicate
	default:
		if opts.NearDuplicate > 1 {
			return nil, nil, fmt.Errorf("near-duplicate threshold %g: want a Jaccard similarity in (0, 1], or < 0 for none", opts.NearDuplicate)
		}
	}
	rep := &ImportReport{File: file, Masked: MaskCounts{}}
	im := &importer{file: file, opts: opts, rep: rep}

	br := bufio.NewReaderSize(r, sniffBytes)
	if bom, _ := br.Peek(3); string(bom) == "\xef\xbb\xbf" {
		br.Discard(3)
	}
	format := strings.ToLower(opts.Format)
	if format == "" || format == FormatAuto {
		head, _ := br.Peek(sniffBytes)
		format = sniff(file, head)
	}
	rep.Format = format
	var err error
	switch format {
	case FormatShareGPT:
		err = im.readShareGPT(br)
	case FormatJSONL:
		err = im.readJSONL(br)
	case FormatCSV:
		err = im.readCSV(br)
	default:
		return nil, nil, fmt.Errorf("unknown format %q: want auto, sharegpt, jsonl or csv", opts.Format)
	}
	if err != nil {
		return nil, rep, err
	}

	// Clean, mask, drop the blank ones. A conversation is one prompt:
	// its turns are cleaned and masked each, a blank turn dropped, and
	// when fewer than two are left it is a single question.
	type prompt struct {
		text   string   // the prompt, or a conversation's turns joined (for dedupe and length)
		turns  []string // a conversation's turns
		system string   // its system prompt, cleaned and masked
		label  string
		has    bool
		masks  MaskCounts
	}
	var prompts []prompt
	add := func(r importRow, texts []string) {
		rep.Prompts++
		p := prompt{masks: MaskCounts{}}
		for _, t := range texts {
			if t = cleanText(t); t == "" {
				continue
			}
			masked, counts := Deidentify(t)
			p.turns = append(p.turns, masked)
			p.masks.Add(counts)
		}
		switch len(p.turns) {
		case 0:
			rep.Empty++
			return
		case 1:
			p.text, p.turns = p.turns[0], nil
		default:
			p.text = strings.Join(p.turns, "\n\n")
		}
		p.label, p.has = r.label, r.hasLabel
		if sys := cleanText(r.system); sys != "" {
			masked, counts := Deidentify(sys)
			p.system = masked
			p.masks.Add(counts)
		}
		prompts = append(prompts, p)
	}
	for _, r := range im.rows {
		if r.conversation {
			add(r, r.texts)
			continue
		}
		for _, t := range r.texts {
			add(r, []string{t})
		}
	}

	// Deduplicate.
	texts := make([]string, len(prompts))
	for i, p := range prompts {
		texts[i] = p.text
	}
	if opts.NearDuplicate > 0 {
		rep.NearDuplicate = opts.NearDuplicate
	}
	verdicts, _ := Dedupe(texts, opts.NearDuplicate)
	var kept []prompt
	var keptTexts []string
	items := 0 // prompts and turns, as the loader counts them
	for i, v := range verdicts {
		switch v {
		case Exact:
			rep.ExactDuplicates++
		case Near:
			rep.NearDuplicates++
		default:
			kept = append(kept, prompts[i])
			keptTexts = append(keptTexts, prompts[i].text)
			rep.Masked.Add(prompts[i].masks)
			items += 1 + len(prompts[i].turns)
		}
	}
	rep.Kept = len(kept)
	if len(kept) == 0 {
		return nil, rep, fmt.Errorf("%s: %w (%d rows read, %d bad, %d prompts empty or duplicate)", file, ErrNoPrompts, rep.Rows, rep.BadRows, rep.Prompts-rep.Kept)
	}

	// Categorise.
	by := strings.ToLower(opts.CategoryBy)
	switch by {
	case "", CategoryByAuto:
		by = CategoryByLength
		for _, p := range kept {
			if p.has {
				by = CategoryByLabel
				break
			}
		}
	case CategoryByLength, CategoryByLabel:
	default:
		return nil, rep, fmt.Errorf("unknown categorisation %q: want auto, length or label", opts.CategoryBy)
	}
	rep.CategoryBy = by
	groups := map[string][]prompt{}
	var order []string
	for _, p := range kept {
		var c string
		if by == CategoryByLabel {
			c = labelName(p.label)
		} else {
			c = lengthCategory(p.text, opts.LongFrom, opts.ComplexFrom)
		}
		if _, ok := groups[c]; !ok {
			order = append(order, c)
		}
		groups[c] = append(groups[c], p)
	}
	if by == CategoryByLength {
		order = order[:0]
		for _, c := range []string{"short", "long", "complex"} {
			if len(groups[c]) > 0 {
				order = append(order, c)
			}
		}
	} else {
		sort.SliceStable(order, func(a, b int) bool { return len(groups[order[a]]) > len(groups[order[b]]) })
	}
	if items+3 > maxItems {
		return nil, rep, fmt.Errorf("%s: %d prompts and turns kept, more than a suite may hold (%d): split the input", file, items, maxItems-3)
	}

	s := &Suite{
		Name:        opts.Name,
		Description: fmt.Sprintf("Imported from %s: %d prompts of real traffic, deduplicated and de-identified", filepath.Base(file), len(kept)),
		Language:    opts.Language,
		Source:      file,
	}
	if s.Name == "" {
		s.Name = identFrom(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), "imported")
	}
	if s.Language == "" {
		s.Language = detectLanguage(keptTexts)
	}
	lengths := builtinShape()
	for _, name := range order {
		texts := groups[name]
		c := Category{
			Name:   name,
			Weight: share(len(texts), len(kept)),
		}
		if by == CategoryByLength {
			ref := lengths[name]
			c.MaxTokens, c.Thresholds = ref.MaxTokens, ref.Thresholds
			switch name {
			case "short":
				c.Description = fmt.Sprintf("Prompts of fewer than %d words (a CJK character counts as half a word)", opts.LongFrom)
			case "long":
				c.Description = fmt.Sprintf("Prompts of %d to %d words", opts.LongFrom, opts.ComplexFrom-1)
			case "complex":
				c.Description = fmt.Sprintf("Prompts of %d words or more", opts.ComplexFrom)
			}
		} else {
			c.Description = fmt.Sprintf("Prompts labelled %q", name)
		}
		width := max(3, len(strconv.Itoa(len(texts))))
		for i, p := range texts {
			q := Prompt{
				ID:        fmt.Sprintf("%s-%0*d", name, width, i+1),
				Text:      p.text,
				Language:  s.Language,
				MaxTokens: c.MaxTokens,
				Category:  name,
				System:    p.system,
			}
			if len(p.turns) > 1 {
				q.Text = p.turns[0]
				for _, t := range p.turns {
					q.Turns = append(q.Turns, Turn{Text: t})
				}
			}
			c.Prompts = append(c.Prompts, q)
		}
		s.Categories = append(s.Categories, c)
	}
	return s, rep, nil
}

// sniffBytes is how far sniff looks for the first character.
const sniffBytes = 64 << 10

// sniff guesses the format from the file's extension (.jsonl, .ndjson,
// .csv, .tsv), else from the first character that is not space in head.
func sniff(file string, data []byte) string {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".jsonl", ".ndjson":
		return FormatJSONL
	case ".csv", ".tsv":
		return FormatCSV
	}
	t := bytes.TrimLeftFunc(data, unicode.IsSpace)
	switch {
	case len(t) > 0 && t[0] == '[':
		return FormatShareGPT
	case len(t) > 0 && t[0] == '{':
		return FormatJSONL
	}
	return FormatCSV
}

// errRowTooLong stops reading a row longer than the bound.
var errRowTooLong = errors.New("row too long")

// window is the input as a JSON decoder reads it: it keeps the bytes read
// since the last offset asked for (at), to count their lines, and fails
// a read that would hold more than max of them.
type window struct {
	r     io.Reader
	max   int
	buf   []byte // bytes from offset base on
	base  int64
	lines int // newlines before base
}

func (w *window) Read(p []byte) (int, error) {
	if len(w.buf) > w.max {
		return 0, errRowTooLong
	}
	n, err := w.r.Read(p)
	w.buf = append(w.buf, p[:n]...)
	return n, err
}

// at returns the 1-based line of offset off (not before the last asked
// for) and forgets the bytes before it.
func (w *window) at(off int64) int {
	k := min(max(int(off-w.base), 0), len(w.buf))
	w.lines += bytes.Count(w.buf[:k], []byte("\n"))
	w.buf = append(w.buf[:0], w.buf[k:]...)
	w.base += int64(k)
	return 1 + w.lines
}

// readShareGPT reads a JSON array of conversations.
func (im *importer) readShareGPT(r io.Reader) error {
	max := RowBytes(im.opts.MaxPromptBytes)
	// The decoder reads ahead by at most its buffer; the window bounds
	// what it holds to an element and that much more.
	w := &window{r: r, max: max + 64<<10}
	dec := json.NewDecoder(w)
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		return fmt.Errorf("%s:%d: not a JSON array of conversations", im.file, w.at(dec.InputOffset()))
	}
	for i := 0; dec.More(); i++ {
		start := dec.InputOffset()
		// InputOffset is before the comma and space that precede an
		// element; the element's line is that of its first character.
		w.at(start)
		rest := w.buf
		skip := len(rest) - len(bytes.TrimLeft(rest, ", \t\r\n"))
		line := w.at(start + int64(skip))
		im.rep.Rows++
		var v any
		if err := dec.Decode(&v); err != nil {
			if errors.Is(err, errRowTooLong) {
				im.bad(line, i, "element of more than %d bytes (%d a prompt, --max-prompt-bytes), the rest of the file is not read", max, im.opts.MaxPromptBytes)
				return nil
			}
			im.bad(line, i, "invalid JSON, the rest of the file is not read: %v", err)
			return nil
		}
		if n := dec.InputOffset() - start - int64(skip); n > int64(max) {
			im.bad(line, i, "element of %d bytes, more than %d (%d a prompt, --max-prompt-bytes)", n, max, im.opts.MaxPromptBytes)
			continue
		}
		im.object(v, line, i)
	}
	if _, err := dec.Token(); err != nil {
		im.rep.Problems = append(im.rep.Problems, &ImportProblem{File: im.file, Line: w.at(dec.InputOffset()), Index: -1, Msg: fmt.Sprintf("invalid JSON after the last element: %v", err)})
	}
	return nil
}

// lineReader reads lines of at most max bytes; it reads past a longer one
// in chunks of its buffer, never holding it whole.
type lineReader struct {
	br   *bufio.Reader
	max  int
	line int    // the 1-based number of the last line read
	buf  []byte // the last line read
}

// next reads the next line, without its "\n"; long reports a line of more
// than max bytes (skipped: line is nil), n its length. It returns io.EOF
// after the last line.
func (l *lineReader) next() (line []byte, n int, long bool, err error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		n += len(chunk)
		if !long {
			if len(l.buf)+len(chunk) > l.max+1 { // +1: the "\n"
				long, l.buf = true, l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, 0, false, err
		case err != nil && n == 0:
			return nil, 0, false, io.EOF
		}
		l.line++
		if long {
			return nil, n, true, nil
		}
		return bytes.TrimSuffix(l.buf, []byte("\n")), n, false, nil
	}
}

// readJSONL reads one JSON object per line; blank lines are skipped.
func (im *importer) readJSONL(r *bufio.Reader) error {
	lr := &lineReader{br: r, max: RowBytes(im.opts.MaxPromptBytes)}
	for {
		line, n, long, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", im.file, lr.line+1, err)
		}
		if long {
			im.rep.Rows++
			im.bad(lr.line, -1, "line of %d bytes, more than %d (%d a prompt, --max-prompt-bytes)", n, lr.max, im.opts.MaxPromptBytes)
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		im.rep.Rows++
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			im.bad(lr.line, -1, "invalid JSON: %v", err)
			continue
		}
		if dec.More() {
			im.bad(lr.line, -1, "invalid JSON: more than one value on the line")
			continue
		}
		im.object(v, lr.line, -1)
	}
}

// bounded reports whether every text is within the prompt bound, and
// reports the row as bad when one is not.
func (im *importer) bounded(texts []string, line, index int) bool {
	for _, t := range texts {
		if len(t) > im.opts.MaxPromptBytes {
			im.bad(line, index, "a prompt of %d bytes, more than %d (--max-prompt-bytes)", len(t), im.opts.MaxPromptBytes)
			return false
		}
	}
	return true
}

// object takes the prompts and label of a JSON row.
func (im *importer) object(v any, line, index int) {
	obj, ok := v.(map[string]any)
	if !ok {
		im.bad(line, index, "not a JSON object but %s", jsonKind(v))
		return
	}
	var row importRow
	switch {
	case obj[im.opts.PromptField] != nil:
		t, ok := obj[im.opts.PromptField].(string)
		if !ok {
			im.bad(line, index, "%q is %s, not a string", im.opts.PromptField, jsonKind(obj[im.opts.PromptField]))
			return
		}
		row.texts = []string{t}
	case obj["messages"] != nil:
		texts, system, msg := turns(obj["messages"], "role", "content", im.opts.FirstTurnOnly)
		if msg != "" {
			im.bad(line, index, "messages: %s", msg)
			return
		}
		row.texts, row.system, row.conversation = texts, system, !im.opts.SplitTurns
		if row.conversation && len(texts) > MaxTurns {
			im.bad(line, index, "messages: a conversation of %d user turns, more than a suite's %d (--turns first or split takes it)", len(texts), MaxTurns)
			return
		}
	case obj["conversations"] != nil:
		texts, system, msg := turns(obj["conversations"], "from", "value", im.opts.FirstTurnOnly)
		if msg != "" {
			im.bad(line, index, "conversations: %s", msg)
			return
		}
		row.texts, row.system, row.conversation = texts, system, !im.opts.SplitTurns
		if row.conversation && len(texts) > MaxTurns {
			im.bad(line, index, "conversations: a conversation of %d user turns, more than a suite's %d (--turns first or split takes it)", len(texts), MaxTurns)
			return
		}
	default:
		im.bad(line, index, "no %q, \"messages\" or \"conversations\" field", im.opts.PromptField)
		return
	}
	if !im.bounded(row.texts, line, index) {
		return
	}
	switch l := obj[im.opts.LabelField].(type) {
	case string:
		row.label, row.hasLabel = l, true
	case json.Number:
		row.label, row.hasLabel = l.String(), true
	case bool:
		row.label, row.hasLabel = strconv.FormatBool(l), true
	}
	im.rows = append(im.rows, row)
}

// turns returns the user turns of a conversation: a list of objects whose
// role field (also tried: "role", "from") is user or human, with the text
// in the content field (also tried: "content", "value"), a string or a
// list of parts {"type": "text", "text": ...}. system is the text of its
// first system (or developer) message, "" when none.
func turns(v any, roleKey, textKey string, first bool) (out []string, system, problem string) {
	list, ok := v.([]any)
	if !ok {
		return nil, "", fmt.Sprintf("%s, not a list", jsonKind(v))
	}
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, "", fmt.Sprintf("[%d] is %s, not an object", i, jsonKind(item))
		}
		role, _ := firstOf(m, roleKey, "role", "from").(string)
		switch r := strings.ToLower(role); {
		case (r == "system" || r == "developer") && system == "":
			system, _ = messageText(firstOf(m, textKey, "content", "value"))
			continue
		case r != "user" && r != "human":
			continue
		}
		text, ok := messageText(firstOf(m, textKey, "content", "value"))
		if !ok {
			return nil, "", fmt.Sprintf("[%d]: the user's %q is not text", i, textKey)
		}
		out = append(out, text)
		if first {
			break
		}
	}
	if len(out) == 0 {
		return nil, "", "no user turn"
	}
	return out, system, ""
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return nil
}

// messageText returns the text of a message's content: a string, or the
// text parts of a list joined by newlines.
func messageText(v any) (string, bool) {
	switch c := v.(type) {
	case string:
		return c, true
	case []any:
		var parts []string
		for _, p := range c {
			m, ok := p.(map[string]any)
			if !ok {
				return "", false
			}
			if t, ok := m["text"].(string); ok && (m["type"] == nil || m["type"] == "text") {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n"), true
	}
	return "", false
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// promptColumns are the column names a CSV file's prompt may have when the
// prompt field's name is not in its header.
var promptColumns = []string{"prompt", "question", "text", "query", "input", "instruction", "content", "message"}

// csvRecords splits CSV input into records as encoding/csv reads them
// (a quoted field may span lines; "" in it is a quote), so that each is
// parsed alone and none is held beyond max bytes.
type csvRecords struct {
	br    *bufio.Reader
	comma byte
	max   int
	line  int    // lines before the record next returns
	buf   []byte // the last record read
}

// next returns the next record with its line ending, its first line, its
// length and whether it is longer than max (then rec is nil: it was read
// past, not kept). It returns io.EOF after the last.
func (c *csvRecords) next() (rec []byte, line, n int, long bool, err error) {
	c.buf = c.buf[:0]
	line = c.line + 1
	quoted, fieldStart, closed := false, true, false
	for {
		b, err := c.br.ReadByte()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, line, n, false, err
			}
			if n == 0 {
				return nil, line, 0, false, io.EOF
			}
			c.line++ // the last line, without its "\n"
			return c.buf, line, n, long, nil
		}
		n++
		if !long {
			if len(c.buf) >= c.max {
				long, c.buf = true, c.buf[:0]
			} else {
				c.buf = append(c.buf, b)
			}
		}
		switch {
		case b == '"' && quoted:
			quoted, closed = false, true
		case b == '"' && (fieldStart || closed):
			quoted = true // a quoted field opens, or "" goes on
		case b == '\n':
			c.line++
			if !quoted {
				if long {
					return nil, line, n, true, nil
				}
				return c.buf, line, n, false, nil
			}
		}
		if !quoted {
			fieldStart = b == c.comma
			closed = closed && b == '"'
		} else {
			fieldStart, closed = false, false
		}
	}
}

// readCSV reads a CSV file with a header; a .tsv file is read with tabs.
func (im *importer) readCSV(r *bufio.Reader) error {
	recs := &csvRecords{br: r, comma: ',', max: RowBytes(im.opts.MaxPromptBytes)}
	if strings.EqualFold(filepath.Ext(im.file), ".tsv") {
		recs.comma = '\t'
	}
	// parse reads one record; a blank one is io.EOF.
	parse := func(rec []byte) ([]string, *csv.Reader, error) {
		cr := csv.NewReader(bytes.NewReader(rec))
		cr.FieldsPerRecord = -1
		cr.Comma = rune(recs.comma)
		fields, err := cr.Read()
		return fields, cr, err
	}
	var header []string
	for header == nil {
		rec, line, n, long, err := recs.next()
		switch {
		case errors.Is(err, io.EOF):
			return fmt.Errorf("%s: %w: the file is empty", im.file, ErrNoPrompts)
		case err != nil:
			return fmt.Errorf("%s: reading the header: %v", im.file, err)
		case long:
			return fmt.Errorf("%s:%d: a header of %d bytes, more than %d", im.file, line, n, recs.max)
		}
		header, _, err = parse(rec)
		if err != nil && !errors.Is(err, io.EOF) {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("%s:%d: reading the header: %v", im.file, line+pe.StartLine-1, pe.Err)
			}
			return fmt.Errorf("%s: reading the header: %v", im.file, err)
		}
	}
	col := func(names ...string) int {
		for _, n := range names {
			for i, h := range header {
				if strings.EqualFold(strings.TrimSpace(h), n) {
					return i
				}
			}
		}
		return -1
	}
	pc := col(im.opts.PromptField)
	if pc < 0 && im.opts.PromptField == "prompt" {
		pc = col(promptColumns...)
	}
	if pc < 0 {
		return fmt.Errorf("%s:1: no prompt column %q in the header %q", im.file, im.opts.PromptField, header)
	}
	lc := col(im.opts.LabelField)
	for {
		rec, first, n, long, err := recs.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", im.file, first, err)
		}
		if long {
			im.rep.Rows++
			im.bad(first, -1, "a record of %d bytes, more than %d (%d a prompt, --max-prompt-bytes)", n, recs.max, im.opts.MaxPromptBytes)
			continue
		}
		fields, cr, err := parse(rec)
		if errors.Is(err, io.EOF) {
			continue // a blank line
		}
		im.rep.Rows++
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				im.bad(first+pe.StartLine-1, -1, "%v", pe.Err)
			} else {
				im.bad(first, -1, "%v", err)
			}
			continue
		}
		line, _ := cr.FieldPos(0)
		line += first - 1
		if pc >= len(fields) {
			im.bad(line, -1, "%d fields, no prompt column (column %d)", len(fields), pc+1)
			continue
		}
		if !im.bounded(fields[pc:pc+1], line, -1) {
			continue
		}
		row := importRow{texts: []string{fields[pc]}}
		if lc >= 0 && lc < len(fields) && strings.TrimSpace(fields[lc]) != "" {
			row.label, row.hasLabel = fields[lc], true
		}
		im.rows = append(im.rows, row)
	}
}

// cleanText makes a prompt safe to store: valid UTF-8, line breaks as
// "\n", no control or format characters other than newline and tab, no
// surrounding space.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			return '\n'
		case unicode.IsControl(r), r == '\uFEFF', r == '\uFFFE', r == '\uFFFF':
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// lengthCategory puts text in short, long or complex by its length in
// words, a CJK character counting as half a word.
func lengthCategory(text string, longFrom, complexFrom int) string {
	half := 0
	for _, w := range words(Normalize(text)) {
		if r, _ := utf8.DecodeRuneInString(w); isCJK(r) {
			half++
		} else {
			half += 2
		}
	}
	switch {
	case half < 2*longFrom:
		return "short"
	case half < 2*complexFrom:
		return "long"
	}
	return "complex"
}

// builtinShape returns the budgets and thresholds of the builtin suites'
// categories, by name.
func builtinShape() map[string]Category {
	out := map[string]Category{}
	s, err := Builtin("en-assistant")
	if err != nil {
		return out
	}
	for _, c := range s.Categories {
		out[c.Name] = c
	}
	return out
}

// share returns n of total in percent, to four significant digits.
func share(n, total int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(100*float64(n)/float64(total), 'g', 4, 64), 64)
	return v
}

// labelName makes a category name of a label: spaces become dashes,
// control characters go, at most 100 bytes; a blank label is
// "unlabelled".
func labelName(label string) string {
	return identFrom(label, "unlabelled")
}

// identFrom makes an identifier of s (see labelName), or def when nothing
// is left.
func identFrom(s, def string) string {
	s = strings.Join(strings.Fields(cleanText(s)), "-")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	for len(s) > 100 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	if s == "" {
		return def
	}
	return s
}

// detectLanguage returns zh-CN, ja or ko when most texts hold Han
// characters, kana or Hangul, else en.
func detectLanguage(texts []string) string {
	var han, kana, hangul int
	for _, t := range texts {
		var h, k, g bool
		for _, r := range t {
			h = h || unicode.Is(unicode.Han, r)
			k = k || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
			g = g || unicode.Is(unicode.Hangul, r)
		}
		switch {
		case k:
			kana++
		case g:
			hangul++
		case h:
			han++
		}
	}
	half := len(texts) / 2
	switch {
	case kana > half:
		return "ja"
	case hangul > half:
		return "ko"
	case han > half:
		return "zh-CN"
	}
	return "en"
}
