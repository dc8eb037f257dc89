package cmdutil

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestInterruptible checks that a command's analysis is abandoned at once
// when its context is done, with an error that says what was not done and
// is "interrupted", and that a finished analysis gives its own result.
func TestInterruptible(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	err := Interruptible(ctx, "the sites of k.metal were listed", func() error {
		<-release // an analysis that never looks at ctx
		return nil
	})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned %v after the cancel", d)
	}
	if err == nil || err.Error() != "interrupted before the sites of k.metal were listed" || !errors.Is(err, context.Canceled) || ErrorKind(err) != "interrupted" {
		t.Errorf("got %v (kind %s)", err, ErrorKind(err))
	}

	want := errors.New("no function")
	if err := Interruptible(context.Background(), "x", func() error { return want }); err != want {
		t.Errorf("a finished analysis: got %v, want its error", err)
	}
	// Finished, but after the context was done: it may have given up half
	// way, so it is interrupted too.
	done, cancel2 := context.WithCancel(context.Background())
	if err := Interruptible(done, "x", func() error { cancel2(); return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("an analysis that saw the cancel: got %v", err)
	}
	if err := Interruptible(nil, "x", func() error { return nil }); err != nil {
		t.Errorf("no context: %v", err)
	}
}
