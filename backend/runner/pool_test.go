package runner

import (
	"context"
	"os"
	"testing"
	"time"
)

// fakePool returns a Pool whose runners are fake runners in mode cpu.
func fakePool(t *testing.T, max int) *Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{Max: max, Start: func(ctx context.Context) (*Proc, error) {
		r, err := Start(Config{Path: exe, Env: []string{"METALAB_FAKE_RUNNER=cpu"}})
		if err != nil {
			return nil, err
		}
		if _, err := r.Call(ctx, MsgHello, nil, 10*time.Second); err != nil {
			r.Close()
			return nil, err
		}
		return r, nil
	}}
	t.Cleanup(p.Close)
	return p
}

func acquire(t *testing.T, s *Lease) (*Proc, bool) {
	t.Helper()
	r, fresh, err := s.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r, fresh
}

// TestPoolRunnerPerSlot: every slot has a runner process of its own, kept
// between its uses; past Max the least recently used slot's runner is
// stopped and that slot gets a new one when it is next used.
func TestPoolRunnerPerSlot(t *testing.T) {
	p := fakePool(t, 2)
	a, b, c := p.NewLease(), p.NewLease(), p.NewLease()
	ra, fresh := acquire(t, a)
	if !fresh {
		t.Error("a slot's first runner is not fresh")
	}
	rb, _ := acquire(t, b)
	if ra.Pid() == rb.Pid() {
		t.Fatalf("two slots share runner process %d", ra.Pid())
	}
	if r, fresh := acquire(t, a); r != ra || fresh {
		t.Errorf("a slot's second use got another runner (fresh %v)", fresh)
	}
	// c evicts b, the least recently used.
	rc, _ := acquire(t, c)
	if rc.Pid() == ra.Pid() || rc.Pid() == rb.Pid() {
		t.Fatalf("a third slot shares a runner process (%d; others %d, %d)", rc.Pid(), ra.Pid(), rb.Pid())
	}
	if b.Proc() != nil || p.Live() != 2 {
		t.Errorf("after a third slot with Max 2: b holds %v, %d live; want b evicted, 2 live", b.Proc(), p.Live())
	}
	rb2, fresh := acquire(t, b)
	if !fresh || rb2.Pid() == rb.Pid() || rb2.Pid() == ra.Pid() || rb2.Pid() == rc.Pid() {
		t.Errorf("an evicted slot's new runner: pid %d fresh %v (others %d %d %d)", rb2.Pid(), fresh, ra.Pid(), rb.Pid(), rc.Pid())
	}
	if n := p.Starts(); n != 4 {
		t.Errorf("%d runners started, want 4", n)
	}
	if p.StartTime() <= 0 {
		t.Errorf("4 starts took %v together", p.StartTime())
	}
	// A runner that died is replaced.
	rb2.Kill()
	rb2.dead = true
	if r, fresh := acquire(t, b); !fresh || r == rb2 {
		t.Errorf("a dead runner was handed out again")
	}
}

// TestPoolPrestart: a runner started ahead is the next slot's, and a
// spare is never handed to two slots.
func TestPoolPrestart(t *testing.T) {
	p := fakePool(t, 4)
	p.Prestart()
	p.Prestart() // one at a time
	a, b := p.NewLease(), p.NewLease()
	ra, _ := acquire(t, a)
	rb, _ := acquire(t, b)
	if ra.Pid() == rb.Pid() {
		t.Fatalf("two slots share runner process %d", ra.Pid())
	}
	if n := p.Starts(); n != 2 {
		t.Errorf("%d runners started, want 2 (the spare, then one more)", n)
	}
	p.Close()
	if a.Proc() != nil || b.Proc() != nil || p.Live() != 0 {
		t.Error("Close left runners to slots")
	}
	// Usable after Close.
	if r, fresh := acquire(t, a); r == nil || !fresh {
		t.Error("no runner after Close")
	}
}

// TestPoolKeepsBusyRunners: a runner in the middle of a request is never
// the one stopped to make room; with every live runner busy the pool goes
// past Max rather than stop one, and the busy runners are kept.
func TestPoolKeepsBusyRunners(t *testing.T) {
	p := fakePool(t, 2)
	a, b, c, d := p.NewLease(), p.NewLease(), p.NewLease(), p.NewLease()
	ra, _ := acquire(t, a) // a is the least recently used
	acquire(t, b)
	a.SetBusy(true)
	acquire(t, c) // evicts b, not the busy a
	if a.Proc() != ra || b.Proc() != nil {
		t.Fatalf("a busy runner was stopped (a holds %v, want %v; b holds %v, want nil)", a.Proc(), ra, b.Proc())
	}
	c.SetBusy(true)
	acquire(t, d) // every live runner busy: a third one
	if a.Proc() != ra || c.Proc() == nil || d.Proc() == nil || p.Live() != 3 {
		t.Errorf("with every runner busy: a %v c %v d %v, %d live; want all kept, 3 live", a.Proc(), c.Proc(), d.Proc(), p.Live())
	}
	a.SetBusy(false)
	c.SetBusy(false)
	acquire(t, b) // room again: the least recently used idle runner (a) goes
	if a.Proc() != nil || p.Live() > 3 {
		t.Errorf("once idle, the least recently used runner was not stopped: a %v, %d live", a.Proc(), p.Live())
	}
}

// TestPoolRaiseAndRequests: a raised Max keeps more runners live (never
// lowered), and the pool counts its runners' requests by type, HELLO of
// the start left to the start's time.
func TestPoolRaiseAndRequests(t *testing.T) {
	p := fakePool(t, 1)
	p.Raise(2)
	p.Raise(1)
	if p.Limit() != 2 {
		t.Fatalf("Limit %d after Raise(2), Raise(1); want 2", p.Limit())
	}
	a, b := p.NewLease(), p.NewLease()
	ra, _ := acquire(t, a)
	acquire(t, b)
	if r, fresh := acquire(t, a); r != ra || fresh {
		t.Errorf("with Max raised to 2, a's runner was evicted by b's")
	}
	if _, err := ra.Call(context.Background(), MsgReset, []byte{1, 2, 3}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	stats := p.Requests()
	if len(stats) != 1 || stats[0].Request != "reset" || stats[0].Calls != 1 || stats[0].Sent != 3 || stats[0].Seconds <= 0 {
		t.Errorf("requests %+v; want one reset of 3 bytes sent (the starts' HELLOs not counted)", stats)
	}
}
