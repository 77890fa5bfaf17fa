"""The lab's Hydra sweeper: lab_sweeper.LabSweeper, hydra/sweeper=lab."""
