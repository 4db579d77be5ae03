package tokenizer_test

import (
	"fmt"

	"github.com/tokenpulse/tokenpulse/internal/engine/tokenizer"
)

// A SentencePiece vocabulary built by hand; a real one comes from a GGUF
// file through FromGGUF.
func ExampleNew() {
	v := tokenizer.Vocab{
		Model:  "llama",
		Tokens: []string{"<unk>", "<s>", "</s>", "▁", "h", "i", "▁h", "▁hi", "<0xC3>", "<0xA9>"},
		Scores: []float32{0, 0, 0, -3, -3, -3, -2, -1, 0, 0},
		Types: []int32{tokenizer.TypeUnknown, tokenizer.TypeControl, tokenizer.TypeControl,
			1, 1, 1, 1, 1, tokenizer.TypeByte, tokenizer.TypeByte},
		UNK: 0, BOS: 1, EOS: 2, PAD: -1, EOT: -1,
		AddBOS: true, AddSpacePrefix: true,
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		panic(err)
	}
	ids := tok.Encode("hié", true, false)
	fmt.Println(ids)
	var texts, stream []string
	d := tok.NewStreamDecoder()
	for _, id := range ids {
		texts = append(texts, tok.Text(id))
		stream = append(stream, d.Next(id)) // the byte tokens of "é" come out together
	}
	fmt.Printf("%q\n%q\n", texts, stream)
	fmt.Println(tok.Decode(ids), tok.IsEOG(2))
	// Output:
	// [1 7 8 9]
	// ["<s>" "▁hi" "<0xC3>" "<0xA9>"]
	// ["" " hi" "" "é"]
	//  hié true
}
