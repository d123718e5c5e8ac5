package runtime

import (
	"errors"
	"fmt"
)

// Sentinels of the runtime, matched with errors.Is.
var (
	// ErrInvalidProgram is returned when a program's layers do not form a
	// runnable graph (see *ProgramError).
	ErrInvalidProgram = errors.New("runtime: invalid program")
	// ErrUnknownPreset is returned by Preset for a name it does not know.
	ErrUnknownPreset = errors.New("runtime: unknown program preset")
	// ErrBadProgramFile is returned when a program file cannot be parsed
	// (see *FileError).
	ErrBadProgramFile = errors.New("runtime: bad program file")
	// ErrBadInput is returned by Run for an input whose length is not
	// m times the program's input width.
	ErrBadInput = errors.New("runtime: bad input")
	// ErrNotInitialized is returned by Run before Init, and by Init and Run
	// after Destroy.
	ErrNotInitialized = errors.New("runtime: backend not initialized")
	// ErrNoKernel is returned when no kernel was given.
	ErrNoKernel = errors.New("runtime: no kernel")
	// ErrNoProgram is returned when no program was given or loaded.
	ErrNoProgram = errors.New("runtime: no program")
	// ErrMethodNotFound is returned by Module.LoadMethod and Module.Method
	// for a method the program does not have.
	ErrMethodNotFound = errors.New("runtime: method not found")
	// ErrUnknownOption is returned when the XNNPACK backend's options hold a
	// key it does not understand; a misspelt key would otherwise be ignored
	// and the cache silently stay off.
	ErrUnknownOption = errors.New("runtime: unknown backend option")
	// ErrUnknownKernel is returned when the kernel option names a kernel the
	// module's registry lacks.
	ErrUnknownKernel = errors.New("runtime: unknown kernel")
)

// ProgramError reports the layer and field that make a program invalid.
type ProgramError struct {
	Layer string
	Field string
	Msg   string
}

func (e *ProgramError) Error() string {
	return fmt.Sprintf("%v: layer %q %s: %s", ErrInvalidProgram, e.Layer, e.Field, e.Msg)
}

func (e *ProgramError) Unwrap() error { return ErrInvalidProgram }

// FileError reports the byte offset, field and value at which a program
// file was rejected, in the manner of debug/elf's FormatError.
type FileError struct {
	Off   int64
	Field string
	Val   uint64
	Msg   string
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%v: offset %d: %s %d: %s", ErrBadProgramFile, e.Off, e.Field, e.Val, e.Msg)
}

func (e *FileError) Unwrap() error { return ErrBadProgramFile }
