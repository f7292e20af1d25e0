package result

import "time"

// ToolName is the name every document the tool writes gives as its tool.
const ToolName = "clmemprobe"

// Header is what every measured document says of itself: the schema it follows, the build that wrote it,
// when it started, the command line that repeats it and the platform it ran on. NewHeader is the one place
// that makes one, and each document's constructor below takes it, so the documents cannot drift apart in
// how they say it.
type Header struct {
	SchemaVersion int
	Tool          Tool
	Started       string // RFC 3339, UTC
	Command       []string
	Platform      Platform
}

// NewHeader starts a document now: written by the given version of the tool, for command, on the platform
// of inv at index platform (the zero platform where inv has none there).
func NewHeader(version string, command []string, inv Inventory, platform int) Header {
	h := Header{SchemaVersion: SchemaVersion, Tool: Tool{Name: ToolName, Version: version},
		Started: time.Now().UTC().Format(time.RFC3339), Command: command}
	if platform >= 0 && platform < len(inv) {
		h.Platform = inv[platform].Platform
	}
	return h
}

// NewRun is a run with header h and no jobs yet; it is partial until the engine ends it.
func NewRun(h Header) *Run {
	return &Run{SchemaVersion: h.SchemaVersion, Tool: h.Tool, Started: h.Started, Command: h.Command, Platform: h.Platform,
		Jobs: []JobResult{}, Partial: true}
}

// NewLargest is a `largest` result with header h and no device searched yet.
func NewLargest(h Header) *Largest {
	return &Largest{SchemaVersion: h.SchemaVersion, Kind: LargestKind, Tool: h.Tool, Started: h.Started, Command: h.Command,
		Platform: h.Platform}
}

// NewRemedy is a `remedy` result with header h and no job run yet.
func NewRemedy(h Header) *Remedy {
	return &Remedy{SchemaVersion: h.SchemaVersion, Kind: RemedyKind, Tool: h.Tool, Started: h.Started, Command: h.Command,
		Platform: h.Platform}
}

// NewExchangeRun is an exchange result with header h around what the exchange did.
func NewExchangeRun(h Header, ex Exchange) *ExchangeRun {
	return &ExchangeRun{SchemaVersion: h.SchemaVersion, Tool: h.Tool, Started: h.Started, Command: h.Command, Platform: h.Platform,
		Exchange: ex}
}
