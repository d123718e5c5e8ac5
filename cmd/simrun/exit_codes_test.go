package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExitCodes holds every command to the convention of docs/simrun.md:
// 0 ok, 1 a finding, 2 bad usage or input it cannot read, with a line on
// stderr saying what was wrong for every 2. Where a command cannot give a
// code cheaply here (bench's 0 and 1, launch's 1, random's and conform's
// 1), testdata/script and the command's own tests hold it.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, body string) string {
		require.NoError(t, os.WriteFile(at(name), []byte(body), 0o644))
		return at(name)
	}
	scenario, err := os.ReadFile("../../sim/testdata/scenarios/g3-relaunch-hits-everything")
	require.NoError(t, err)
	good := write("good", string(scenario))
	wrong := write("wrong", strings.Replace(string(scenario), "load=missing place=file", "load=ok place=file", 1))
	badVerb := write("bad-verb", "lokup proc=A name=w0\n----\nmiss\n")
	noSep := write("no-sep", "init proc=A program=P1\nload=missing\n")
	empty := write("empty", "# nothing but a comment\n")
	binary := write("binary", "\x1f\x8b\x08\x00\x00\x00")

	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(&env{stdout: &out, stderr: &errOut}, []string{"launch", "--cache", at("a.cache")}), errOut.String())
	cacheFile, err := os.ReadFile(at("a.cache"))
	require.NoError(t, err)
	flipped := append([]byte(nil), cacheFile...)
	flipped[100] ^= 0xff
	flipped[4096+100] ^= 0xff // both commit slots and the first entry's data
	write("bad.cache", string(flipped))
	require.Equal(t, exitOK, run(&env{stdout: &out, stderr: &errOut}, []string{"launch", "--cache", at("b.cache"), "--kernel", "f32-goi-nr8"}), errOut.String())

	for _, c := range []struct {
		code int
		args []string
	}{
		{0, []string{"help"}},
		{0, []string{"help", "inspect"}},
		{2, []string{"help", "nosuch"}},
		{2, []string{"help", "inspect", "extra"}},
		{0, []string{"version"}},
		{0, []string{"--version"}},
		{2, []string{"version", "extra"}},
		{2, []string{"nosuch"}},
		{2, []string{"--bogus"}},
		{0, []string{"kernels"}},
		{2, []string{"kernels", "extra"}},
		{0, []string{"inspect", at("a.cache")}},
		{1, []string{"inspect", at("bad.cache")}},
		{2, []string{"inspect", at("missing")}},
		{2, []string{"inspect", dir}},
		{2, []string{"inspect"}},
		{0, []string{"inspect", "--svg", at("a.cache")}},
		{1, []string{"inspect", "--svg", at("bad.cache")}},
		{2, []string{"inspect", "--svg", binary}},
		{2, []string{"inspect", "--svg", "--json", at("a.cache")}},
		{0, []string{"diff", at("a.cache"), at("a.cache")}},
		{1, []string{"diff", at("a.cache"), at("b.cache")}},
		{1, []string{"diff", at("a.cache"), at("bad.cache")}},
		{2, []string{"diff", at("a.cache"), at("missing")}},
		{2, []string{"diff", at("a.cache")}},
		{0, []string{"replay", good, "--backend", "crashfs"}},
		{1, []string{"replay", wrong, "--backend", "crashfs"}},
		{2, []string{"replay", badVerb}},
		{2, []string{"replay", noSep}},
		{2, []string{"replay", empty}},
		{2, []string{"replay", binary}},
		{2, []string{"replay", at("missing")}},
		{2, []string{"replay"}},
		{0, []string{"explore", "--depth", "3", "--quiet"}},
		{1, []string{"explore", "--design", "v1-no-seed", "--quiet"}},
		{2, []string{"explore", "--design", "nosuch"}},
		{2, []string{"explore", "extra"}},
		{0, []string{"explore", "--list-designs"}},
		{0, []string{"launch", "--cache", at("a.cache")}},
		{2, []string{"launch"}},
		{2, []string{"launch", "--cache", at("a.cache"), "extra"}},
		{2, []string{"launch", "--cache", at("a.cache"), "--model", at("missing")}},
		{2, []string{"bench", "--preset", "huge"}},
		{2, []string{"bench", "extra"}},
		{0, []string{"random", "--runs", "1", "--steps", "5", "--out", dir}},
		{2, []string{"random", "--runs", "0"}},
		{2, []string{"random", "extra"}},
		{2, []string{"conform", "extra"}},
		{2, []string{"conform", "--walks", "-1"}},
	} {
		out.Reset()
		errOut.Reset()
		got := run(&env{stdout: &out, stderr: &errOut}, c.args)
		require.Equal(t, c.code, got, "simrun %s\nstdout: %s\nstderr: %s", strings.Join(c.args, " "), out.String(), errOut.String())
		if c.code == exitUsage {
			require.NotEmpty(t, strings.TrimSpace(errOut.String()), "simrun %s: exit 2 without a word", strings.Join(c.args, " "))
		}
	}
}
