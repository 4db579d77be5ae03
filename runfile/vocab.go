package runfile

// The run file's vocabulary: the values its enumerated fields take. Each
// is written here once; the packages that set or read them (stream,
// bench, browserbench, measure, compare, report, baseline) use these
// constants, never the strings.

// ErrorKind classifies a failed request (Request.ErrorKind).
type ErrorKind string

// The kinds of failure.
const (
	// ErrorHTTP: the server answered with an error status, or reported an
	// error object inside the stream.
	ErrorHTTP ErrorKind = "http"
	// ErrorConnect: no response came (refused, reset, closed before any
	// response byte), or the request could not be built (an unknown API).
	ErrorConnect ErrorKind = "connect"
	// ErrorCut: the stream ended without "[DONE]" or a finish reason.
	ErrorCut ErrorKind = "cut"
	// ErrorMalformed: an event's data was not the JSON of a chunk, or the
	// response was not an event stream.
	ErrorMalformed ErrorKind = "malformed"
	// ErrorTimeout: the request's deadline passed.
	ErrorTimeout ErrorKind = "timeout"
	// ErrorCancelled: the request's context was cancelled.
	ErrorCancelled ErrorKind = "cancelled"
	// ErrorOverflow: the response crossed one of the client's limits on
	// what one request may receive.
	ErrorOverflow ErrorKind = "overflow"
)

// Arrival is how a run's measured requests were sent (Config.Arrival):
// the closed loop, or the process of an open loop's schedule.
type Arrival string

// The arrivals.
const (
	// ArrivalClosed: no schedule; each of Concurrency workers sends its
	// next request when its previous one ends.
	ArrivalClosed Arrival = "closed"
	// ArrivalPoisson: exponential inter-arrivals of mean 1/Rate.
	ArrivalPoisson Arrival = "poisson"
	// ArrivalGamma: gamma inter-arrivals of shape Burstiness, mean 1/Rate.
	ArrivalGamma Arrival = "gamma"
	// ArrivalConstant: exactly 1/Rate between arrivals.
	ArrivalConstant Arrival = "constant"
	// ArrivalTrace: a recorded trace's arrival times (Config.Trace),
	// replayed.
	ArrivalTrace Arrival = "trace"
)

// Open reports whether a is an open loop's process (a schedule): neither
// ArrivalClosed nor empty, which older files wrote for a closed loop.
func (a Arrival) Open() bool { return a != "" && a != ArrivalClosed }

// TokenSource says where a request's token counts came from
// (Request.TokenSource, Request.PromptTokenSource).
type TokenSource string

// The token sources.
const (
	// TokensUsage: the server's usage object.
	TokensUsage TokenSource = "usage"
	// TokensEvents: no count; the content events were counted instead.
	TokensEvents TokenSource = "events"
	// TokensServer: the server's per-event counts (tokenpulse serve and
	// mock, the browser run's relay).
	TokensServer TokenSource = "server"
	// TokensTokenizer: counted with a GGUF vocabulary (bench --tokenizer).
	TokensTokenizer TokenSource = "tokenizer"
)

// ChangeStatus is the judgement on one change of a comparison
// (Change.Status).
type ChangeStatus string

// The states of a change.
const (
	// ChangeRegressed: worse, beyond the tolerance and significant.
	ChangeRegressed ChangeStatus = "regressed"
	// ChangeImproved: better, beyond the tolerance and significant.
	ChangeImproved ChangeStatus = "improved"
	// ChangeWithin: the change is within the tolerance.
	ChangeWithin ChangeStatus = "within tolerance"
	// ChangeWithinNoise: the new figure is inside its noise band.
	ChangeWithinNoise ChangeStatus = "within noise"
	// ChangeNoisyRunner: a p95 or a maximum worse beyond its tolerance,
	// but by no more than the measuring machine's own wake-up delays
	// during the run (MachineNoise): not a regression.
	ChangeNoisyRunner ChangeStatus = "runner noisy"
	// ChangeNotSignificant: beyond the tolerance, but the test cannot
	// tell it from noise.
	ChangeNotSignificant ChangeStatus = "not significant"
	// ChangeTooFew: a side has too few values to test.
	ChangeTooFew ChangeStatus = "too few samples"
)
