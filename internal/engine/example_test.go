package engine_test

import (
	"context"
	"fmt"

	"github.com/tokenpulse/tokenpulse/internal/engine"
)

// Generate greedily from the bundled stories260K model, streaming each
// token's text as it is produced.
func ExampleSession_Generate() {
	ctx := context.Background()
	m, err := engine.Load(ctx, engine.Options{}) // ModelPath "" = bundled
	if err != nil {
		panic(err)
	}
	defer m.Close()
	if _, err := m.Warmup(ctx); err != nil {
		panic(err)
	}
	prompt := m.Tokenizer().Encode("Once upon a time", true, false)
	res, err := m.NewSession().Generate(ctx, prompt, engine.Params{MaxTokens: 11},
		func(t engine.Token) error {
			fmt.Print(t.Text)
			return nil
		})
	if err != nil {
		panic(err)
	}
	fmt.Printf("\n%d prompt tokens, %d generated, stop: %s\n", res.PromptTokens, res.OutputTokens, res.StopReason)
	// Output:
	// , there was a little girl named Lily.
	// 5 prompt tokens, 11 generated, stop: length
}
