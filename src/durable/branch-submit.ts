import { idInStory } from "../lib/ids";
import { configOf } from "../config";
import { type rawRun, uniqueViolation } from "../db/client";
import type { Writer } from "../domain/shared/actor";
import { commit, type IdempotentRequest, recordStatements } from "../domain/shared/idempotency";
import { writtenEvents } from "../domain/events/inbox-events";
import { checkLength } from "../domain/shared/length";
import { type Quota, segmentWrite, writeValues, written } from "../domain/stories/segment-write";
import { type SegmentLimits, type SegmentUsage, perBranchCounts, refusalOf, tightest } from "../domain/stories/segment-quota";
import { type NewSegment, branchHeadQuery, rowOf, segmentView } from "../domain/stories/segments";
import { NO_SESSION, type Session, type Subject } from "../domain/standing/rule";
import { storyArchived, validationError } from "../lib/errors";
import { type RateState, limitError } from "../lib/limit-error";
import { holder, inTurnMode } from "../turns/rules";
import { explainRefusal, refuseIfHidden } from "./branch-checks";
import type { TurnQueue } from "./branch-queue";
import type { Room, RoomHost } from "./branch-state";
import { type Applied, type TurnChanges, heard } from "./branch-turns";
import { liveSegment } from "./live";

export interface SubmitOptions {
  /** The writer opens the branch with a starter segment (exempt from min_length). */
  isStarter?: boolean;
  idempotency?: IdempotentRequest;
  /** The writer's segment limits, counted in the write's own batch (none for admins). */
  limits?: SegmentLimits | null;
  /** The writer's session (a JWT's; none for a key or token): its standing is checked in the write's batch. */
  session?: Session;
}

type SegmentView = ReturnType<typeof segmentView>;

/** The answer to a submission: the record, nested again as `segment` for older clients, and whose turn it is. */
export type SubmitResult = SegmentView & { segment: SegmentView; next_bot: { id: string; name: string } | null };

/** What a submission gives the Worker: the answer, the writer's tightest limit, and the inbox event to hand over. */
export interface Submitted {
  data: SubmitResult;
  /** The segment's story (its search shard learns of it through the queue). */
  storyId: string;
  rate: RateState | null;
  inboxEvent: string | null;
}

/**
 * A segment submitted to the branch: its length and starter rules, the turn rule, then one batch holding the segment
 * and everything that goes with it (its log, counters, the turn, the outbox, the idempotency record), whose INSERT is
 * conditional on the writer's standing and limits. Called by `BranchRoom` inside its lock with the room loaded.
 */
export class Submissions {
  constructor(
    private readonly host: RoomHost,
    private readonly turns: TurnChanges,
    private readonly queue: TurnQueue,
  ) {}

  async submit(room: Room, writer: Writer, content: string, options: SubmitOptions): Promise<Submitted> {
    await refuseIfHidden(this.host.db, room);
    if (options.isStarter) checkStarter(room, writer);
    const length = checkLength(content, options.isStarter ? { ...room.rules, minLength: 0 } : room.rules);
    const applied = this.turns.decide(room, { type: "submit", writer }, writer.id);
    const now = Date.now();
    // In turn mode the queue paces the branch; the per-branch limit (a bot's) applies only to writes outside it.
    const quota = options.limits ? { limits: options.limits, perBranch: perBranchCounts(options.limits, inTurnMode(room.turn, writer.type)), now } : null;
    const seg: NewSegment = {
      id: idInStory(room.storyId),
      branchId: room.branchId,
      storyId: room.storyId,
      author: writer,
      content,
      contentLength: length,
      sequenceOrder: room.nextSeq,
      createdAt: new Date(now).toISOString(),
      parentSegmentId: room.lastSegmentId,
      isStarter: options.isStarter,
      kind: options.isStarter ? "fork" : "continuation",
    };
    const { data, usage, inboxEvent } = await this.writeSegment(room, seg, applied, options.idempotency, quota, options.session ?? NO_SESSION);
    room.nextSeq = seg.sequenceOrder + 1;
    room.lastSegmentId = seg.id;
    await this.turns.keep(room, applied, { reason: "submitted", events: [liveSegment(room.branchId, data.segment, data.next_bot)] });
    return { data, storyId: room.storyId, rate: quota && usage ? tightest(usage, quota.limits, quota.perBranch, now) : null, inboxEvent };
  }

  /**
   * Segment, log, counters, turn, outbox and idempotency record in one batch; resyncs the sequence once if D1 is
   * ahead of the room (it cannot be, unless a writer outside the room wrote to this branch).
   */
  private async writeSegment(
    room: Room,
    seg: NewSegment,
    applied: Applied,
    idem: IdempotentRequest | undefined,
    quota: Quota | null,
    session: Session,
  ): Promise<{ data: SubmitResult; usage?: SegmentUsage; inboxEvent: string | null }> {
    const db = this.host.db;
    const subject: Subject = { id: seg.author.id, type: seg.author.type, ...session };
    for (let attempt = 0; ; attempt++) {
      try {
        const data = submitResult(seg, applied);
        // The writer's standing and limits are conditions of the segment's own INSERT (no statement of their own):
        // a refused write inserts nothing, and every later statement is conditional on the segment being there.
        const write = segmentWrite(db, writeValues(seg, subject, quota, configOf(this.host.env).inbox));
        const ifWritten = written(seg.id);
        const statements = [
          ...write.statements,
          ...this.turns.statements(room, applied, ifWritten),
          ...recordStatements(db, idem, { status: 201, data }, ifWritten),
          ...(write.usage ? [write.usage] : []),
        ];
        const results = await commit(() => db.batch(statements as [ReturnType<typeof rawRun>]));
        const inserted = results[0] as D1Result;
        const usage = quota ? (results.at(-1) as unknown as SegmentUsage[])[0] : undefined;
        if (inserted.meta.changes !== 1) {
          await explainRefusal(db, subject, room); // read alone, on a refusal only
          return await this.refused(room, seg.author, quota, usage);
        }
        heard(applied, statements, results);
        return { data, usage, inboxEvent: writtenEvents(statements, results, [{ id: seg.id, statement: write.event }])[0] ?? null };
      } catch (err) {
        if (attempt > 0 || !uniqueViolation(err)?.includes("segments")) throw err;
        const [head] = await branchHeadQuery(db, seg.branchId);
        seg.sequenceOrder = (head?.sequenceOrder ?? 0) + 1;
        seg.parentSegmentId = head?.id ?? room.lastSegmentId;
      }
    }
  }

  /**
   * A write its batch refused, once `explainRefusal` found nothing else: a limit (a queued bot refused at its own turn
   * sits out until it may write again, and the turn passes at once, so the branch is not held up for the turn
   * timeout). Else only a race: what refused it in the batch (the story archived, it or the branch hidden, the
   * writer suspended) was undone before the read, and the write is answered as archived though the story is active.
   */
  private async refused(room: Room, writer: Writer, quota: Quota | null, usage: SegmentUsage | undefined): Promise<never> {
    const kept = room.turn.members.find((m) => m.botId === writer.id)?.sitsOutUntil ?? null;
    const refusal = quota && usage ? refusalOf(usage, quota.limits, quota.perBranch, quota.now, kept) : null;
    if (!refusal) throw storyArchived();
    throw limitError(refusal, writer.type === "bot" ? await this.queue.sitOut(room, writer.id, refusal.writableAt) : {});
  }
}

/** A starter opens a branch: only while it has no segments of its own, and only by its creator or an admin. */
function checkStarter(room: Room, writer: Writer) {
  if (room.nextSeq !== room.forkSequence + 1) {
    throw validationError([{ field: "is_starter", issue: "the branch already has segments of its own; only its first segment can be a starter" }]);
  }
  if (writer.type !== "admin" && writer.id !== room.creatorId) {
    throw validationError([{ field: "is_starter", issue: "only the branch's creator (or an admin) may open it with a starter" }]);
  }
}

function submitResult(seg: NewSegment, applied: Applied): SubmitResult {
  const segment = segmentView(rowOf(seg));
  const next = holder(applied.state);
  return { ...segment, segment, next_bot: next ? { id: next.botId, name: next.name } : null };
}
