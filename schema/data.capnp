# Training data: readers stream batches to trainers under credit-based flow control.
#
#   trainer -> reader   PullRequest (credits); reader -> trainer: BatchMessage ..., EndOfData
#   trainer -> reader   BatchAck (the batch was trained; the reader may commit past it)
#   coordinator -> reader   PositionRequest / PositionReply (the committed position now)

@0x855ae9e500020d82;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ss::wire::schema");

struct ReadPosition {
# Where a reader is in its files: the position after the last row of a batch.

  fileIndex @0 :UInt32;
  # Index into the reader's list of input files.
  byteOffset @1 :UInt64;
  # Byte offset in that file (of the uncompressed stream for gzip files).
  lineNumber @2 :UInt64 = 1;
  # 1-based number of the next line, for messages about bad rows.
  previousLineCrc @3 :UInt32;
  # CRC32C of the line that ends at byteOffset, its line break included (0: not recorded). A
  # restarted reader checks it, so that it never resumes in a file that changed.
  fileSize @4 :UInt64;
  # The file's on-disk size when it was read (0: not recorded); checked the same way.
  epoch @5 :UInt32;
  # The pass over the data (0-based); fileIndex indexes that epoch's order of the files.
  windowBatches @6 :UInt32;
  # Batches of the shuffle window starting at the position already handed out (0: the position
  # is a window's end).
  fileName @7 :Text;
  # A followed input (--follow): the name, in its directory, of the file the position is in (a
  # followed file: the followed name); empty: nothing read yet, or a job over fixed files, whose
  # positions use fileIndex.
  device @8 :UInt64;
  # A followed input: the identity of the file read (stat's st_dev and st_ino), by which a
  # restarted reader finds it even after it was rotated away under another name.
  inode @9 :UInt64;
  # 0: no file is open at the position: the next one is read from its start (a followed file:
  # the file its name holds then; a directory: the first name after fileName).
  windowEndFile @10 :UInt32;
  # Inside a shuffle window of the reader's own files (windowBatches > 0): where the window ends,
  # as fileIndex ... fileSize say where it starts. A job resumed on another reader count counts the
  # files before it as read, and a new reader finishes the window (RegisterReply.windowsLeft).
  windowEndOffset @11 :UInt64;
  windowEndLine @12 :UInt64 = 1;
  windowEndCrc @13 :UInt32;
  windowEndSize @14 :UInt64;
  inherited @15 :UInt32;
  # 0: the position is in the reader's own files; k: in the k-th shuffle window it inherited
  # (RegisterReply.windowsLeft, 1-based), fileIndex ... its start, windowBatches its batches
  # handed out.
}

struct ExampleBatch {
# Parsed, hashed examples in columnar form (ss::data::example_batch). Every list length follows
# from `examples`, `numDense` and `numSparse`; the decoder refuses a batch where one does not.

  examples @0 :UInt32;
  # Number of examples in the batch.
  numDense @1 :UInt32;
  # Dense features per example.
  numSparse @2 :UInt32;
  # Categorical features per example.
  labels @3 :List(Float32);
  # One per example, 0 or 1.
  dense @4 :List(Float32);
  # examples x numDense, row-major, already transformed (log(1 + max(x, 0))).
  ids @5 :List(UInt64);
  # Hashed categorical ids of all examples, in CSR order (see `offsets`).
  offsets @6 :List(UInt32);
  # examples x numSparse + 1 entries, from 0, non-decreasing, the last equal to the number of
  # ids: the ids of example e, feature f are ids[offsets[e * numSparse + f] ..
  # offsets[e * numSparse + f + 1]).
}

struct PullRequest {
# A trainer asks a reader for more batches.

  credits @0 :UInt32 = 1;
  # How many more batches the trainer can take now.
  trainer @1 :UInt64;
  # The asking trainer's incarnation: the reader hands its batches to another trainer if this
  # one leaves the cluster view.
  pull @2 :UInt64;
  # This pull's number (per trainer, from 1; 0: not numbered).
  abandoned @3 :List(UInt64);
  # Earlier pulls of this trainer to this reader whose answers it stopped waiting for: a batch
  # handed out for one of them never reaches it, and goes to the next trainer at once.
}

struct BatchMessage {
# One batch from a reader to a trainer.

  readerIndex @0 :UInt32;
  # The sending reader.
  sequence @1 :UInt64;
  # Per reader, from 0, no gaps.
  batch @2 :ExampleBatch;
  # The examples.
  end @3 :ReadPosition;
  # Resume here to continue after this batch.
  incarnation @4 :UInt64;
  # The reader process that numbered the batch (sequences restart when a reader restarts).
  examplesBefore @5 :UInt64;
  # The reader's examples before this batch, over every epoch and incarnation: where the job is,
  # for the learning-rate schedule.
}

struct EndOfData {
# A reader has sent every batch it will send to this trainer.

  readerIndex @0 :UInt32;
  # The sending reader.
  batches @1 :UInt64;
  # Batches this reader sent in all.
}

struct BatchAck {
# A trainer has trained a batch: the reader may commit its position past it.

  readerIndex @0 :UInt32;
  # The reader that sent the batch.
  sequence @1 :UInt64;
  # The batch's sequence number.
  incarnation @2 :UInt64;
  # The reader process that numbered it: an ack for an earlier incarnation is refused.
  trainer @3 :UInt64;
  # The acking trainer's incarnation (0: not said): a batch handed to another trainer since (this
  # one had left the view) is the other's to ack.
}

struct PositionRequest {
# The coordinator asks a reader for its committed position as it stands now: a snapshot records
# it at its start (a heartbeat's can be an interval old, and every example trained since would be
# trained again on resume).
}

struct PositionReply {
# A reader's committed position when it answered.

  committed @0 :ReadPosition;
  # Every row before it was trained (valid when hasCommitted).
  hasCommitted @1 :Bool;
  # False: nothing committed since the reader started (the coordinator keeps what it knew).
  committedExamples @2 :UInt64;
  # Examples before the committed position, including those of earlier incarnations.
  committedBadRows @3 :UInt64;
  # Bad rows before the committed position, including those of earlier incarnations.
}
