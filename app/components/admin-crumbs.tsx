import { Link } from "react-router";

/** The admin console's trail: "Admin / … / here", each level before the last a link. */
export function AdminCrumbs({ trail, here }: { trail?: { to: string; label: string }[]; here: string }) {
  return (
    <p className="text-sm">
      {[{ to: "/admin", label: "Admin" }, ...(trail ?? [])].map((c) => (
        <span key={c.to}>
          <Link to={c.to} className="text-brand-700 underline">
            {c.label}
          </Link>{" "}
          /{" "}
        </span>
      ))}
      {here}
    </p>
  );
}
