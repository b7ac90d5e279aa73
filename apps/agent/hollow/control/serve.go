package control

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// progressEvery is how often the driver hears the fleet's counts (as from the Node workers).
const progressEvery = time.Second

// Serve reads commands from in and writes replies to out, one JSON object a line, until the
// driver says "shutdown", closes in (it is gone) or ctx ends; then it stops every agent. It says
// "ready" first and "progress" every second. Commands run concurrently, as in the Node worker; a
// command that fails, or that the Go generator does not support, is answered "error".
func Serve(ctx context.Context, in io.Reader, out io.Writer, options Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := newFleet(options)
	w := &replyWriter{out: out}
	var running sync.WaitGroup
	finish := func() {
		cancel()
		running.Wait()
		f.stopAll()
	}
	if err := w.send(Ready{}); err != nil {
		return err
	}
	running.Go(func() {
		ticker := time.NewTicker(progressEvery)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				_ = w.send(f.progress())
			}
		}
	})

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		reader := bufio.NewReader(in)
		for {
			line, err := reader.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()

	for {
		select {
		case <-ctx.Done():
			finish()
			return nil
		case err := <-readErr:
			// The driver is gone (Ctrl-C, crash): nothing of ours may stay behind.
			finish()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read commands: %w", err)
		case line := <-lines:
			command, err := Parse(line)
			if err != nil {
				_ = w.send(Error{Message: err.Error()})
				continue
			}
			if _, ok := command.(Shutdown); ok {
				finish()
				return nil
			}
			running.Go(func() {
				reply, err := f.handle(ctx, command)
				if err != nil {
					reply = Error{Message: err.Error()}
				}
				_ = w.send(reply)
			})
		}
	}
}

// replyWriter writes whole lines, one at a time (commands reply from their own goroutines).
type replyWriter struct {
	mu  sync.Mutex
	out io.Writer
}

func (w *replyWriter) send(reply Reply) error {
	line, err := Encode(reply)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.out.Write(line); err != nil {
		return fmt.Errorf("write %s: %w", reply.replyType(), err)
	}
	return nil
}
