// Package termbar draws a progress bar on stderr while a command works,
// only when a person watches it on a terminal. A nil *Bar draws nothing,
// so that a caller never asks whether there is one.
package termbar

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// Bar is a progress bar on stderr.
type Bar struct{ b *progressbar.ProgressBar }

// On says whether w is a terminal.
func On(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// New is a bar of max steps (-1: unknown) named desc, when watched is a
// terminal; nil otherwise. opts add to the house's look: the count shown,
// 30 columns wide, cleared when done.
func New(watched io.Writer, max int64, desc string, opts ...progressbar.Option) *Bar {
	if !On(watched) {
		return nil
	}
	return &Bar{progressbar.NewOptions64(max, append([]progressbar.Option{progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(desc), progressbar.OptionShowCount(), progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish()}, opts...)...)}
}

// Start draws the bar before its first step.
func (b *Bar) Start() {
	if b != nil {
		_ = b.b.RenderBlank()
	}
}

// Describe renames the bar: what it has done so far.
func (b *Bar) Describe(desc string) {
	if b != nil {
		b.b.Describe(desc)
	}
}

// Set moves the bar to step n.
func (b *Bar) Set(n int) {
	if b != nil {
		_ = b.b.Set(n)
	}
}

// Add moves the bar one step on.
func (b *Bar) Add() {
	if b != nil {
		_ = b.b.Add(1)
	}
}

// Finish ends the bar and clears it.
func (b *Bar) Finish() {
	if b != nil {
		_ = b.b.Finish()
	}
}
