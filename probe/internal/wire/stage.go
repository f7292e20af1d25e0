package wire

import (
	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Stage is what a child is doing, as it stores it in the progress cell.
type Stage uint64

// The stages, in the cell's numbering.
const (
	StageSetup Stage = iota
	StageCreate
	StageTouch
	StageMigrate
	StageFinish
	StageRunning // the exchange's steps
	StageDone
)

// Result names the stage as the result does.
func (s Stage) Result() result.Stage {
	switch s {
	case StageSetup:
		return result.StageSetup
	case StageCreate:
		return result.StageCreate
	case StageTouch:
		return result.StageTouch
	case StageMigrate:
		return result.StageMigrate
	case StageFinish:
		return result.StageFinish
	case StageRunning:
		return "running"
	}
	return result.StageDone
}

// Cell is the progress cell with typed stages: the child's view and the parent's.
type Cell struct{ *progress.Cell }

// SetStage records the stage the child is entering.
func (c Cell) SetStage(s Stage) { c.Cell.SetStage(uint64(s)) }

// Stage returns the last recorded stage.
func (c Cell) Stage() Stage { return Stage(c.Cell.Stage()) }
