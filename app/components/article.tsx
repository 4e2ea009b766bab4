import type { ReactNode } from "react";
import { BackLink } from "./back-link";

/** Layout of the blog article and the legal pages: a Back button, a heading, readable text. */
export function Article({
  title,
  intro,
  backLabel = "Back",
  children,
}: {
  title: string;
  intro?: ReactNode;
  backLabel?: string;
  children: ReactNode;
}) {
  return (
    <article className="container-page max-w-3xl py-10 sm:py-14">
      <BackLink label={backLabel} />
      <h1 className="mt-8 text-3xl font-extrabold tracking-tight sm:text-4xl">{title}</h1>
      {intro ? <div className="mt-3 text-muted">{intro}</div> : null}
      <div className="text-[1.0625rem] leading-relaxed text-slate-700 [&_a]:font-medium [&_a]:text-brand-700 [&_a]:underline [&_h2]:mt-10 [&_h2]:text-xl [&_h2]:font-bold [&_h2]:text-ink [&_h3]:mt-6 [&_h3]:font-semibold [&_h3]:text-ink [&_li]:mt-2 [&_ol]:mt-4 [&_ol]:list-decimal [&_ol]:pl-6 [&_p]:mt-4 [&_ul]:mt-4 [&_ul]:list-disc [&_ul]:pl-6">
        {children}
      </div>
      <div className="mt-12">
        <BackLink label={backLabel} />
      </div>
    </article>
  );
}

/** Marks text a lawyer has to settle before launch. */
export function CounselNote({ children = "[To be reviewed by counsel]" }: { children?: ReactNode }) {
  return <mark className="rounded bg-amber-100 px-1 text-amber-900">{children}</mark>;
}
