package llm

// Usage counts what model requests cost. The zero value is no usage.
type Usage struct {
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
	// CacheReadTokens and CacheWriteTokens are the input tokens the
	// provider read from, or wrote to, its prompt cache, where it reports
	// them. They are part of InputTokens, not in addition to it.
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	Requests         int64 `json:"requests,omitempty"` // model requests made
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.Requests += o.Requests
}

// TotalTokens returns input plus output tokens.
func (u Usage) TotalTokens() int64 { return u.InputTokens + u.OutputTokens }

// EstimateUsage returns the deterministic usage the test models report for
// answering req with resp: one request; input tokens estimated from the
// bytes of req (its instructions, the payload of every message part, and
// the name, description and parameter schema of every tool); output tokens
// estimated from the bytes of resp (its text, and the name and arguments of
// every tool call). A byte count n is estimated as ceil(n/4) tokens, the
// usual rule of thumb for English text. Real adapters report the provider's
// figures instead.
func EstimateUsage(req *Request, resp *Response) Usage {
	in := len(req.Instructions)
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p != nil {
				in += p.size()
			}
		}
	}
	for _, t := range req.Tools {
		in += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	out := len(resp.Text)
	for _, c := range resp.ToolCalls {
		out += c.size()
	}
	return Usage{InputTokens: tokens(in), OutputTokens: tokens(out), Requests: 1}
}

func tokens(bytes int) int64 { return int64(bytes+3) / 4 }
