import { type ReactNode, useEffect, useId, useRef } from "react";

/** A native modal <dialog> with its title and a Close button; Escape closes it too. */
export function Modal({
  title,
  onClose,
  children,
  testId,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  testId: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} className="dialog bg-white" aria-labelledby={titleId} onClose={onClose} data-testid={testId}>
      <div className="mb-4 flex items-center justify-between gap-3">
        <h2 id={titleId} className="text-lg font-semibold">
          {title}
        </h2>
        <button type="button" className="btn-ghost min-h-9 px-3 py-1" onClick={onClose}>
          Close
        </button>
      </div>
      <div className="space-y-4">{children}</div>
    </dialog>
  );
}
