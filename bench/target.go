package bench

import (
	"context"
	"net/http"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// DiscoverModel asks the target for its models (GET /v1/models, waiting
// at most 10 s) and returns the first one, or "default".
func DiscoverModel(ctx context.Context, c *stream.Client) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if ids, err := c.Models(ctx); err == nil && len(ids) > 0 {
		return ids[0]
	}
	return "default"
}

// Probe reads what a target says of itself on /health: its backend kind
// and its warm-up breakdown (tokenpulse serve and mock say; other servers
// leave both empty, and the mock, which has no model to warm, gives no
// breakdown).
func Probe(ctx context.Context, c *stream.Client) (backend string, cs *runfile.ColdStart) {
	status, h, err := c.Health(ctx)
	if err != nil || status != http.StatusOK || h == nil {
		return "", nil
	}
	if w := h.Warmup; w != nil && w.LoadNS+w.PageInNS+w.KVInitNS+w.FirstForwardNS > 0 {
		cs = ColdStart(w)
	}
	return h.Backend, cs
}

// ColdStart converts a server's warm-up breakdown into the run file's;
// nil stays nil.
func ColdStart(w *api.Warmup) *runfile.ColdStart {
	if w == nil {
		return nil
	}
	return &runfile.ColdStart{
		LoadMS:         float64(w.LoadNS) / 1e6,
		PageInMS:       float64(w.PageInNS) / 1e6,
		KVInitMS:       float64(w.KVInitNS) / 1e6,
		FirstForwardMS: float64(w.FirstForwardNS) / 1e6,
		TotalMS:        float64(w.TotalNS) / 1e6,
	}
}
