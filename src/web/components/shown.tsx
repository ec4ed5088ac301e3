/**
 * A segment's or comment's text: "hidden by a moderator" in its place when a moderator hid it; its author (and
 * moderators) still read it, marked as hidden.
 */
export function Shown({ item, id, class: cls }: { item: { content: string; hidden: boolean }; id?: string; class?: string }) {
  if (!item.hidden)
    return (
      <p id={id} class={cls}>
        {item.content}
      </p>
    );
  if (!item.content) {
    return (
      <p id={id} class={cls ? `${cls} hidden-item` : "hidden-item"} lang="en">
        <em>hidden by a moderator</em>
      </p>
    );
  }
  return (
    <div id={id} class="hidden-item">
      <p class={cls}>{item.content}</p>
      <p lang="en">
        <em>hidden by a moderator: only you and moderators see this</em>
      </p>
    </div>
  );
}
