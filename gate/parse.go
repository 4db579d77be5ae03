package gate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tokenpulse/tokenpulse/measure"
)

// Op is a comparison operator of a threshold.
type Op int

// The operators of the threshold language.
const (
	Less Op = iota
	LessEq
	Greater
	GreaterEq
)

// String returns the operator as written in a canonical expression.
func (o Op) String() string {
	switch o {
	case Less:
		return "<"
	case LessEq:
		return "<="
	case Greater:
		return ">"
	case GreaterEq:
		return ">="
	}
	return "?"
}

// Holds reports whether "value OP limit" is true.
func (o Op) Holds(value, limit float64) bool {
	switch o {
	case Less:
		return value < limit
	case LessEq:
		return value <= limit
	case Greater:
		return value > limit
	case GreaterEq:
		return value >= limit
	}
	return false
}

// upper reports whether the operator sets an upper bound (< or <=), so that
// larger values are worse.
func (o Op) upper() bool { return o == Less || o == LessEq }

// Rule is one parsed threshold: METRIC.STAT OP LIMIT on a scope.
type Rule struct {
	// Scope is where the rule applies (measure's scope model): overall,
	// cold, a category or a turn. Scoped says whether the expression
	// named it; an unscoped rule has Scope overall, and a suite reads it
	// as the category it is written under.
	Scope  measure.Scope
	Scoped bool
	// Metric and Stat are canonical names ("ttft", "p95"; aliases such as
	// "median" are rewritten to "p50").
	Metric string
	Stat   string
	Op     Op
	// Limit is in Unit: milliseconds for time metrics, percent for rates,
	// a plain number otherwise.
	Limit float64
	// Unit is "ms", "%" or "".
	Unit string
	// Source says where the rule came from ("suite", "tier:NAME", "flag");
	// Parse leaves it empty for the caller to set.
	Source string
	// text is the condition as written, without the scope prefix, with
	// spacing normalised ("e2e.p99 < 8s").
	text string
}

// Text returns the condition without its scope ("gap.max <= 120ms"), with
// the limit as it was written.
func (r Rule) Text() string { return r.text }

// String returns the rule as an expression Parse reads back, with its scope
// prefix when it has one.
func (r Rule) String() string {
	if !r.Scoped {
		return r.text
	}
	return "[" + r.Scope.String() + "] " + r.text
}

// In returns a copy of r scoped to s.
func (r Rule) In(s measure.Scope) Rule {
	r.Scope, r.Scoped = s, true
	return r
}

// SyntaxError is the error Parse returns; it names the expression and what
// is wrong with it.
type SyntaxError struct {
	Expr string
	Msg  string
}

// Error describes the syntax error with the expression it was found in.
func (e *SyntaxError) Error() string { return fmt.Sprintf("threshold %q: %s", e.Expr, e.Msg) }

// ErrSyntax is matched by every *SyntaxError with errors.Is.
var ErrSyntax = errors.New("threshold syntax")

// Is makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Validate reports whether expr is a valid threshold; suite loaders take it
// as their validator.
func Validate(expr string) error {
	_, err := Parse(expr)
	return err
}

// MustParse is Parse for expressions known to be valid; it panics on error.
func MustParse(expr string) Rule {
	r, err := Parse(expr)
	if err != nil {
		panic(err)
	}
	return r
}

// ParseAll parses each expression and joins the errors of the invalid
// ones.
func ParseAll(exprs []string) ([]Rule, error) {
	var rules []Rule
	var errs []error
	for _, e := range exprs {
		r, err := Parse(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rules = append(rules, r)
	}
	return rules, errors.Join(errs...)
}

// Parse reads one threshold expression.
//
// Grammar (spaces are allowed between tokens, not inside them):
//
//	rule   = [ "[" scope "]" ] metric "." stat op number [ unit ]
//	scope  = "overall" | "cold" | "category:" name | "turn:" number
//	op     = "<" | "<=" | ">" | ">=" | "≤" | "≥"
//	number = decimal, not negative ("250", "0.5", "1e3")
//	unit   = "ms" | "s" | "us" | "µs" | "ns" | "%"
//
// Without a scope prefix the rule is not Scoped: Judge reads it as
// overall, and a suite's threshold as the category it is written under.
//
// Metrics, the run-file field each reads, and the stats each accepts:
//
//	metric        field of runfile.Group        stats              unit
//	ttft          TTFTMs (one per request)       see below          time
//	e2e           E2EMs (one per request)        see below          time
//	visible_ttft  VisibleTTFTMs (per request)    see below          time
//	gap           GapMs (every gap, pooled)      see below          time
//	visible_gap   VisibleGapMs (pooled)          see below          time
//	tpot          mean, min, max, count: TPOTMs (per request, per token);
//	              std, p50, p90, p95, p99: TokenIntervalMs, as DESIGN
//	              defines "TPOT std" and "TPOT pNN" (per token)      time
//	tpot_std      TPOTStdMs (each request's own token-interval std)  time
//	ttft_network  TTFTNetworkMs (per request: TTFT less the server's
//	              own queue and prefill, where it sent them)        time
//	server_tpot   ServerTPOTMs (per request: the server's own decode
//	              time per token, where it sent it)                 time
//	painted_ttft  PaintedTTFTMs (per request, browser runs: click
//	              to first paint)                                   time
//	paint_gap     PaintGapMs (pooled: pauses between paints)        time
//	render_overhead  RenderOverheadMs (pooled: paint − arrival)     time
//	long_frame    LongFrameMs (pooled: long animation frames)       time
//	reasoning_ttft, answer_ttft  ReasoningTTFTMs, AnswerTTFTMs (per
//	              request: the first thinking, the first answer event) time
//	reasoning_span, answer_span  ReasoningSpanMs, AnswerSpanMs (per
//	              request: the phase's last event less its first)   time
//	reasoning_tpot, answer_tpot  as tpot, over the phase's own events:
//	              ReasoningTPOTMs / ReasoningTokenIntervalMs, and the
//	              answer's (a run that never thought: tpot's)       time
//	errors        rate: Errors ÷ Requests; count: Errors   rate, count  %, none
//	tokens_per_event  mean: TokensPerEvent (pooled ratio);
//	              max: the largest ratio of one request      mean, max    none
//	goodput       share: the requests that met every per-request
//	              objective of the run's other rules ÷ requests;
//	              rate: those requests per second (measure.Goodput)
//	                                                         share, rate  %, none
//
// The distribution stats are count, mean, std, min, p50, p90, p95, p99 and
// max (aliases: avg, median, stddev). A time metric needs a time unit
// (limits are kept in milliseconds), except its count, which takes none;
// errors.rate needs "%"; counts and tokens_per_event take no unit.
func Parse(expr string) (Rule, error) {
	p := &ruleParser{src: expr, s: strings.TrimSpace(expr)}
	r, err := p.parse()
	if err != nil {
		return Rule{}, &SyntaxError{Expr: expr, Msg: err.Error()}
	}
	return r, nil
}

type ruleParser struct {
	src string
	s   string // what is left to read
}

func (p *ruleParser) skipSpace() { p.s = strings.TrimLeft(p.s, " \t") }

func (p *ruleParser) parse() (Rule, error) {
	var r Rule
	if p.s == "" {
		return r, errors.New("empty expression; write METRIC.STAT OP VALUE, e.g. \"ttft.p95 < 250ms\"")
	}
	if strings.HasPrefix(p.s, "[") {
		end := strings.IndexByte(p.s, ']')
		if end < 0 {
			return r, errors.New("scope has no closing \"]\"")
		}
		sc, err := measure.ParseJudged(strings.TrimSpace(p.s[1:end]))
		if err != nil {
			return r, err
		}
		r = r.In(sc)
		p.s = p.s[end+1:]
		p.skipSpace()
	}
	name := p.ident()
	if name == "" {
		return r, fmt.Errorf("expected a metric at %q; metrics are %s", p.s, metricNames())
	}
	if !strings.HasPrefix(p.s, ".") {
		return r, fmt.Errorf("expected \".STAT\" after %q (e.g. %s.p95)", name, name)
	}
	p.s = p.s[1:]
	stat := p.ident()
	if stat == "" {
		return r, fmt.Errorf("expected a stat after %q", name+".")
	}
	m, ok := metrics[name]
	if !ok {
		return r, fmt.Errorf("unknown metric %q; metrics are %s", name, metricNames())
	}
	if a, ok := statAliases[stat]; ok {
		stat = a
	}
	if _, ok := m.stats[stat]; !ok {
		return r, fmt.Errorf("%s has no stat %q; it has %s", name, stat, m.statNames())
	}
	r.Metric, r.Stat = name, stat
	p.skipSpace()
	op, err := p.op()
	if err != nil {
		return r, err
	}
	r.Op = op
	p.skipSpace()
	num := p.number()
	if num == "" {
		if p.s == "" {
			return r, fmt.Errorf("expected a value after %q", op.String())
		}
		return r, fmt.Errorf("expected a number at %q", p.s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return r, fmt.Errorf("bad number %q", num)
	}
	unit := strings.TrimSpace(p.s)
	kind := m.unitFor(stat)
	limit, canon, err := convert(v, unit, kind, name+"."+stat)
	if err != nil {
		return r, err
	}
	r.Limit, r.Unit = limit, canon
	r.text = fmt.Sprintf("%s.%s %s %s%s", name, stat, op, num, unit)
	return r, nil
}

func (p *ruleParser) ident() string {
	i := 0
	for i < len(p.s) {
		c := p.s[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			i++
			continue
		}
		break
	}
	id := strings.ToLower(p.s[:i])
	p.s = p.s[i:]
	return id
}

func (p *ruleParser) op() (Op, error) {
	for _, c := range []struct {
		tok string
		op  Op
	}{{"<=", LessEq}, {">=", GreaterEq}, {"≤", LessEq}, {"≥", GreaterEq}, {"<", Less}, {">", Greater}} {
		if strings.HasPrefix(p.s, c.tok) {
			p.s = p.s[len(c.tok):]
			return c.op, nil
		}
	}
	if strings.HasPrefix(p.s, "=") || strings.HasPrefix(p.s, "!") {
		return 0, fmt.Errorf("operator at %q is not supported; use <, <=, > or >=", p.s)
	}
	if p.s == "" {
		return 0, errors.New("expected an operator (<, <=, >, >=) and a value")
	}
	return 0, fmt.Errorf("expected an operator (<, <=, >, >=) at %q", p.s)
}

func (p *ruleParser) number() string {
	i := 0
	for i < len(p.s) {
		c := p.s[i]
		switch {
		case c >= '0' && c <= '9', c == '.', c == '-', c == '+':
			i++
		case (c == 'e' || c == 'E') && i > 0 && i+1 < len(p.s) && (p.s[i+1] >= '0' && p.s[i+1] <= '9' || p.s[i+1] == '-' || p.s[i+1] == '+'):
			i++
		default:
			num := p.s[:i]
			p.s = p.s[i:]
			return num
		}
	}
	num := p.s
	p.s = ""
	return num
}

// unitKind is the kind of quantity a metric.stat measures.
type unitKind int

const (
	timeUnit unitKind = iota
	percentUnit
	plainUnit
)

// convert turns v in unit into the canonical unit of kind.
func convert(v float64, unit string, kind unitKind, what string) (float64, string, error) {
	if v < 0 || v != v {
		return 0, "", fmt.Errorf("a limit cannot be negative")
	}
	switch kind {
	case timeUnit:
		switch unit {
		case "ms":
			return v, "ms", nil
		case "s":
			return v * 1e3, "ms", nil
		case "us", "µs", "μs":
			return v / 1e3, "ms", nil
		case "ns":
			return v / 1e6, "ms", nil
		case "":
			return 0, "", fmt.Errorf("%s is a time; give a unit (ms, s, µs, ns), e.g. %g ms", what, v)
		case "%":
			return 0, "", fmt.Errorf("%s is a time, not a percentage; use ms, s, µs or ns", what)
		}
		return 0, "", fmt.Errorf("unknown unit %q for %s; use ms, s, µs or ns", unit, what)
	case percentUnit:
		switch unit {
		case "%":
			if v > 100 {
				return 0, "", fmt.Errorf("%s is a percentage; %g%% is more than 100%%", what, v)
			}
			return v, "%", nil
		case "":
			return 0, "", fmt.Errorf("%s is a rate; give it in percent, e.g. %g%%", what, v)
		}
		return 0, "", fmt.Errorf("%s is a rate; its unit is %%, not %q", what, unit)
	default:
		if unit != "" {
			return 0, "", fmt.Errorf("%s is a plain number; it takes no unit (got %q)", what, unit)
		}
		return v, "", nil
	}
}
