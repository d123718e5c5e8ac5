package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xpwc/xpwc/impl/cache"
	"github.com/xpwc/xpwc/impl/runtime/options"
	"github.com/xpwc/xpwc/kernels"
)

// ExecuTorch PR 19673: before it, Module kept a pointer to the caller's map
// and a lazy load_method read whatever the map held by then. Here the
// caller rewrites and then clears its map between Load and LoadMethod; the
// method must still use the path given at Load.
func TestModuleOwnsItsOptions(t *testing.T) {
	dir := t.TempDir()
	loadPath := filepath.Join(dir, "at-load.cache")
	laterPath := filepath.Join(dir, "later.cache")

	m := testModule(t)
	caller := xnnOpts(t, pathOpt(loadPath))
	require.NoError(t, m.Load(caller))
	want := m.Options()

	require.NoError(t, caller.Set(XNNPACKBackendID, pathOpt(laterPath),
		options.Option{Key: OptWeightCacheEnabled, Value: options.Bool(false)}))
	require.NoError(t, caller.Set("OtherBackend", options.Option{Key: "x", Value: options.Int(1)}))
	assert.Equal(t, want, m.Options(), "the module's options followed the caller's map")
	caller.Clear()
	assert.Equal(t, want, m.Options())

	require.NoError(t, m.LoadMethod(MethodForward, nil))
	mt, err := m.Method(MethodForward)
	require.NoError(t, err)
	assert.Equal(t, loadPath, mt.Config().CachePath)
	assert.True(t, exists(loadPath), "the method did not use the options given at Load")
	assert.False(t, exists(laterPath))
	_, err = mt.Execute(m.Program().Input(1, 0), 1)
	require.NoError(t, err)

	// The map Options hands out is a copy too.
	got := m.Options()
	got.Clear()
	assert.Equal(t, want, m.Options())
	require.NoError(t, m.Close())
}

// G6: a failed load leaves the module's options and loaded methods intact.
func TestFailedLoadKeepsModule(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.cache")
	m := testModule(t)
	require.NoError(t, m.Load(xnnOpts(t, pathOpt(good))))
	require.NoError(t, m.LoadMethod(MethodForward, nil))
	mt, err := m.Method(MethodForward)
	require.NoError(t, err)
	x := m.Program().Input(2, 9)
	before, err := mt.Execute(x, 2)
	require.NoError(t, err)
	wantOpts := m.Options()

	bad := filepath.Join(dir, "bad.cache")
	for name, tc := range map[string]struct {
		opts *options.Map
		want error
	}{
		"bool given a string": {xnnOpts(t, pathOpt(bad), options.Option{Key: OptWeightCacheEnabled, Value: options.String("yes")}), options.ErrWrongType},
		"path given an int":   {xnnOpts(t, options.Option{Key: OptPackedCachePath, Value: options.Int(1)}), options.ErrWrongType},
		"unknown key":         {xnnOpts(t, pathOpt(bad), options.Option{Key: "packed_cache_pth", Value: options.String(bad)}), ErrUnknownOption},
		"unknown kernel":      {xnnOpts(t, pathOpt(bad), options.Option{Key: OptKernel, Value: options.String("f64-nope")}), ErrUnknownKernel},
	} {
		t.Run(name, func(t *testing.T) {
			err := m.Load(tc.opts)
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, wantOpts, m.Options())
			mt2, err := m.Method(MethodForward)
			require.NoError(t, err)
			assert.Same(t, mt, mt2)
			after, err := mt2.Execute(x, 2)
			require.NoError(t, err)
			requireBitsEqual(t, before.Output, after.Output)
		})
	}
	var te *options.TypeError
	require.ErrorAs(t, m.Load(xnnOpts(t, options.Option{Key: OptSaveWeightCacheOnDisk, Value: options.Int(1)})), &te)
	assert.Equal(t, OptSaveWeightCacheOnDisk, te.Key)
	assert.Equal(t, options.KindBool, te.Want)
	assert.Equal(t, options.KindInt, te.Got)

	// A method loaded after the failures still gets the committed options.
	require.NoError(t, m.UnloadMethod(MethodForward))
	require.NoError(t, os.Remove(good))
	require.NoError(t, m.LoadMethod(MethodForward, nil))
	assert.True(t, exists(good))
	assert.False(t, exists(bad))
	require.NoError(t, m.Close())
}

// A failing program load commits nothing either: the options of the failed
// call are not kept, and a later load with other options succeeds.
func TestFailedProgramLoadCommitsNothing(t *testing.T) {
	dir := t.TempDir()
	progPath := filepath.Join(dir, "p.prog")
	m := NewModule(ModuleConfig{
		Program:   func() (*Program, error) { return ReadProgramFile(progPath) },
		Kernel:    RegistryKernels(kernels.NewRegistry()),
		OpenCache: ManagerCaches(cache.NewManager(nil), cache.Options{}),
	})
	err := m.Load(xnnOpts(t, pathOpt(filepath.Join(dir, "first.cache"))))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.False(t, m.IsLoaded())
	assert.Equal(t, 0, m.Options().Len())
	require.ErrorIs(t, m.LoadMethod(MethodForward, nil), ErrNoProgram)

	require.NoError(t, os.WriteFile(progPath, []byte("XPWCPRG\x00garbage-garbage"), 0o644))
	require.ErrorIs(t, m.Load(nil), ErrBadProgramFile)
	assert.False(t, m.IsLoaded())

	p, err := Preset(PresetSmall, 1)
	require.NoError(t, err)
	require.NoError(t, WriteProgramFile(progPath, p))
	second := filepath.Join(dir, "second.cache")
	require.NoError(t, m.Load(xnnOpts(t, pathOpt(second))))
	require.NoError(t, m.LoadMethod(MethodForward, nil))
	assert.True(t, exists(second))
	assert.False(t, exists(filepath.Join(dir, "first.cache")))
	require.NoError(t, m.Close())
}

// Explicit per-method options override the module's for that method only.
func TestLoadMethodOverride(t *testing.T) {
	dir := t.TempDir()
	modPath, methodPath := filepath.Join(dir, "module.cache"), filepath.Join(dir, "method.cache")
	m := testModule(t)
	require.NoError(t, m.Load(xnnOpts(t, pathOpt(modPath))))
	require.NoError(t, m.LoadMethod(MethodForward, xnnOpts(t, pathOpt(methodPath),
		options.Option{Key: OptKernel, Value: options.String("f32-goi-nr8")})))
	mt, err := m.Method(MethodForward)
	require.NoError(t, err)
	assert.Equal(t, "f32-goi-nr8", mt.Config().Kernel)
	assert.True(t, exists(methodPath))
	assert.False(t, exists(modPath))
	v, ok := m.Options().Lookup(XNNPACKBackendID, OptPackedCachePath)
	require.True(t, ok)
	s, _ := v.AsString()
	assert.Equal(t, modPath, s)

	require.ErrorIs(t, m.LoadMethod("backward", nil), ErrMethodNotFound)
	_, err = m.Method("backward")
	require.ErrorIs(t, err, ErrMethodNotFound)
	require.NoError(t, m.Close())
}

// Each of ExecuTorch's limits is a typed error naming the offender, where
// ExecuTorch truncated silently; the module never sees a truncated map.
func TestModuleOptionLimits(t *testing.T) {
	var m options.Map
	longPath := "/" + strings.Repeat("p", options.MaxStringLen)
	err := m.Set(XNNPACKBackendID, pathOpt(longPath))
	var le *options.LengthError
	require.ErrorAs(t, err, &le)
	assert.ErrorIs(t, err, options.ErrValueTooLong)
	assert.Equal(t, OptPackedCachePath, le.Key)
	assert.Equal(t, len(longPath), le.Len)

	err = m.Set(XNNPACKBackendID, options.Option{Key: strings.Repeat("k", 64), Value: options.Bool(true)})
	require.ErrorIs(t, err, options.ErrKeyTooLong)
	err = m.Set(strings.Repeat("B", 64))
	require.ErrorIs(t, err, options.ErrBackendIDTooLong)
	for i := range options.MaxBackends {
		require.NoError(t, m.Set(string(rune('a'+i))))
	}
	require.ErrorIs(t, m.Set(XNNPACKBackendID), options.ErrTooManyBackends)
	assert.False(t, errors.Is(m.Set("a"), options.ErrTooManyBackends))
}

func TestWeightCacheDisabledPacksPrivately(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "off.cache")
	m := testModule(t)
	require.NoError(t, m.Load(xnnOpts(t, pathOpt(path), options.Option{Key: OptWeightCacheEnabled, Value: options.Bool(false)})))
	require.NoError(t, m.LoadMethod(MethodForward, nil))
	mt, err := m.Method(MethodForward)
	require.NoError(t, err)
	st := mt.Backend().Stats()
	assert.Equal(t, m.Program().NumLayers(), st.Private)
	assert.False(t, exists(path))
	_, err = mt.Execute(m.Program().Input(1, 0), 1)
	require.NoError(t, err)
	require.NoError(t, m.Close())
}
