package runfile

import "encoding/json"

// UnmarshalJSON reads a request as run files have written it. Files
// written before counts were kept as recorded left token_counts out
// when every event carried one token, even where the server had said so
// (its emit times, or a token source of "server" or "tokenizer"); such a
// request is read with the ones it left out, so that it means what it
// meant when written: per-event counts are then [Request.TokenCounts],
// and nothing else. Its output tokens are at least its events, as they
// were read then.
func (q *Request) UnmarshalJSON(b []byte) error {
	type plain Request // without this method
	if err := json.Unmarshal(b, (*plain)(q)); err != nil {
		return err
	}
	q.restoreCounts()
	return nil
}

// restoreCounts gives a request of the older shape (see UnmarshalJSON)
// its per-event counts of one.
func (q *Request) restoreCounts() {
	events := len(q.TokenTimesNS)
	if events == 0 || q.TokenCounts != nil {
		return
	}
	if len(q.ServerTimesNS) == 0 && q.TokenSource != TokensServer && q.TokenSource != TokensTokenizer {
		return
	}
	q.TokenCounts = make([]int, events)
	for i := range q.TokenCounts {
		q.TokenCounts[i] = 1
	}
	q.OutputTokens = max(q.OutputTokens, events)
}
