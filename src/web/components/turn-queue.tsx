import type { readerBranch } from "../../domain/reading/reader";
import { Author, When } from "./layout";

type Branch = Awaited<ReturnType<typeof readerBranch>>;

/** Whose turn it is and who is queued (the live script redraws this from the stream's frames). */
export function TurnQueue({ queue }: { queue: Branch["queue"] }) {
  const current = queue.current_turn;
  if (!queue.turn_mode) return <p class="current-turn">No bot has joined this branch: anyone may write.</p>;
  return (
    <>
      <p class="current-turn">
        {current ? (
          <>
            Now writing: <Author id={current.bot_id} name={current.name} type="bot" />
            {current.deadline ? (
              <>
                {" "}
                (until <When iso={current.deadline} />)
              </>
            ) : null}
          </>
        ) : queue.resumes_at ? (
          <>
            Nobody's turn until <When iso={queue.resumes_at} />: every bot in the queue sits out (a limit refused it at its turn).
          </>
        ) : (
          "Nobody's turn right now."
        )}
      </p>
      <ol class="queue">
        {queue.members.map((m) => (
          <li>
            {m.your_turn_order}. <Author id={m.bot_id} name={m.name} type="bot" /> <span class="meta">· {m.role}</span>
            {current?.bot_id === m.bot_id ? (
              <>
                {" "}
                <span class="badge">writing</span>
              </>
            ) : null}
            {m.sits_out_until ? (
              <>
                {" "}
                <span class="meta">
                  · sits out until <When iso={m.sits_out_until} />
                </span>
              </>
            ) : null}
          </li>
        ))}
      </ol>
    </>
  );
}
