import { Form } from "react-router";

// The answer to a library form, and when the server asked to confirm first (trashing a photo whose original page
// advertises a listing, docs/decisions/0170-mls-profiles.md) the same request with confirm=1: a plain form, so it
// works without JavaScript. `as` lets a card post it through its own fetcher.

export type ActionAnswer =
  | { ok: true; message: string }
  | { ok: false; error: string; code?: string; ask?: { intent: string; photoId: string } };

export function ActionMessage({
  answer,
  as: FormComponent = Form,
  compact = false,
}: {
  answer: ActionAnswer;
  /** The form to post the confirmation with: the page's own, or a card's fetcher.Form. */
  as?: React.ElementType;
  compact?: boolean;
}) {
  const text = answer.ok ? answer.message : answer.error;
  return (
    <div
      className={`${answer.ok ? "alert-success" : "alert-error"} ${compact ? "text-xs" : ""}`}
      role={answer.ok ? "status" : "alert"}
      data-testid="action-message"
    >
      <p>{text}</p>
      {!answer.ok && answer.ask ? (
        <FormComponent method="post" className="mt-2" data-testid="confirm-form">
          <input type="hidden" name="intent" value={answer.ask.intent} />
          <input type="hidden" name="photoId" value={answer.ask.photoId} />
          <input type="hidden" name="confirm" value="1" />
          <button type="submit" className="btn-danger min-h-9 px-3 py-1 text-xs">
            Move to the trash anyway
          </button>
        </FormComponent>
      ) : null}
    </div>
  );
}
