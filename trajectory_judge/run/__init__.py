"""Running things: the resumable judge runner, organic agent runs, the local model server, CPU metering."""
