package measure

import (
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// Account is the server's own account of a scope's requests beside the
// client's (tokenpulse's timings, llama-server's): how TTFT splits into
// the server's queue and prefill and the rest (network, HTTP, client),
// and the server's decode time per token against the client's TPOT.
// Means are over the requests the server accounted for, so that the
// parts add up.
type Account struct {
	// Source names who gave the account ("tokenpulse", "llama-server").
	Source string
	// Requests is how many successful requests carried a TTFT split;
	// TTFTMs, ServerTTFTMs and NetworkTTFTMs are their means
	// (TTFT = server + network and client).
	Requests                            int
	TTFTMs, ServerTTFTMs, NetworkTTFTMs float64
	// TPOTRequests is how many of them also carried the server's decode
	// time per token; ClientTPOTMs and ServerTPOTMs are their means.
	TPOTRequests               int
	ClientTPOTMs, ServerTPOTMs float64
	// PromptTokens sums the prompt tokens (usage) of the accounted
	// requests whose server also said how many its prefill processed;
	// CachedTokens sums the rest, those it reused from its prompt cache
	// (llama-server's cache_prompt, tokenpulse serve's prompt cache), so
	// that a TTFT helped by a shared prefix says so.
	PromptTokens, CachedTokens int
}

// ServerAccount returns the server's account of run's requests in scope
// s; ok is false when no request of it had one.
func ServerAccount(run *runfile.Run, s Scope) (a Account, ok bool) {
	var ttft, server, network, cTPOT, sTPOT []float64
	for _, v := range Views(run, s) {
		if !v.OK || !v.HasServerSplit {
			continue
		}
		if a.Source == "" {
			a.Source = v.Req.Server.Source
		}
		if n, run := v.Req.PromptTokens, v.Req.Server.PromptTokens; n > 0 && run > 0 {
			a.PromptTokens += n
			a.CachedTokens += max(n-run, 0)
		}
		ttft = append(ttft, v.TTFTMs)
		server = append(server, v.ServerTTFTMs)
		network = append(network, v.NetworkTTFTMs)
		if v.HasServerTPOT && v.HasTPOT {
			cTPOT = append(cTPOT, v.TPOTMs)
			sTPOT = append(sTPOT, v.ServerTPOTMs)
		}
	}
	if len(ttft) == 0 {
		return Account{}, false
	}
	if a.Source == "" {
		a.Source = "tokenpulse"
	}
	a.Requests, a.TTFTMs, a.ServerTTFTMs, a.NetworkTTFTMs = len(ttft), stats.Mean(ttft), stats.Mean(server), stats.Mean(network)
	a.TPOTRequests = len(cTPOT)
	if a.TPOTRequests > 0 {
		a.ClientTPOTMs, a.ServerTPOTMs = stats.Mean(cTPOT), stats.Mean(sTPOT)
	}
	return a, true
}
