package runner

import (
	"sync/atomic"
	"time"

	"metalab/backend"
)

// Traffic counts a pool's runner requests by type: calls, the wall time
// metalab waited for their replies, and the bytes each way (headers
// left out). A sweep prints it, so that the time between the kernels'
// own time is seen request by request instead of guessed at.
type Traffic struct {
	by [MsgHello + 1]requestCount
}

type requestCount struct {
	calls, ns, sent, received atomic.Int64
}

var requestNames = [MsgHello + 1]string{MsgLoad: "load", MsgBuffer: "buffer", MsgDispatch: "dispatch",
	MsgRead: "read", MsgReset: "reset", MsgHello: "hello"}

func (t *Traffic) add(typ byte, took time.Duration, sent, received int) {
	if t == nil || int(typ) >= len(t.by) {
		return
	}
	c := &t.by[typ]
	c.calls.Add(1)
	c.ns.Add(int64(took))
	c.sent.Add(int64(sent))
	c.received.Add(int64(received))
}

// Stats returns the counts of the request types called at least once,
// in the protocol's order.
func (t *Traffic) Stats() []backend.RequestStat {
	var out []backend.RequestStat
	for typ := range t.by {
		c := &t.by[typ]
		n := c.calls.Load()
		if n == 0 || requestNames[typ] == "" {
			continue
		}
		out = append(out, backend.RequestStat{Request: requestNames[typ], Calls: n,
			Seconds: time.Duration(c.ns.Load()).Seconds(), Sent: c.sent.Load(), Received: c.received.Load()})
	}
	return out
}
