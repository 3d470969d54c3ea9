package mcp

import (
	"slices"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// cl100k is OpenAI's cl100k_base encoding, read from the ranks the loader
// module embeds: nothing is downloaded, so the size tests count real
// tokens offline (a bytes/4 estimate was 10-30 % off either way on tool
// definitions, whose JSON punctuation and schema keywords tokenize
// differently from prose).
var cl100k = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	return tiktoken.GetEncoding(tiktoken.MODEL_CL100K_BASE)
})

// tokens counts the cl100k tokens of text (special-token text is counted
// as ordinary text).
func tokens(tb testing.TB, text string) int {
	tb.Helper()
	enc, err := cl100k()
	if err != nil {
		tb.Fatalf("cl100k_base: %v", err)
	}
	return len(enc.EncodeOrdinary(text))
}

// TestTokensCountsRealTokens: the counter is cl100k itself, not an
// estimate: "hello world" is tokens 15339 and 1917 in cl100k_base, and
// special-token text counts as the ordinary text it is.
func TestTokensCountsRealTokens(t *testing.T) {
	enc, err := cl100k()
	if err != nil {
		t.Fatal(err)
	}
	if got := enc.EncodeOrdinary("hello world"); !slices.Equal(got, []int{15339, 1917}) {
		t.Errorf("cl100k_base tokens of %q = %v; want [15339 1917]", "hello world", got)
	}
	for text, want := range map[string]int{`{"type":"object"}`: 5, "pacto_call_read": 5, "<|endoftext|>": 7, "": 0} {
		if got := tokens(t, text); got != want {
			t.Errorf("tokens(%q) = %d; want %d", text, got, want)
		}
	}
}
