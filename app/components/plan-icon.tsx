import type { Plan } from "~/shared/catalog";
import { StrokeIcon } from "./icons";

const PATHS: Record<Plan["icon"], string> = {
  home: "M3 11.5 12 4l9 7.5M5.5 9.5V20h5v-5h3v5h5V9.5",
  key: "M14.5 9.5a4.5 4.5 0 1 1-9 0 4.5 4.5 0 0 1 9 0ZM13 13l7 7m-3-3 2-2m-4 0 2-2",
  star: "m12 3.5 2.6 5.3 5.9.9-4.3 4.1 1 5.8L12 16.9l-5.2 2.7 1-5.8-4.3-4.1 5.9-.9L12 3.5Z",
  building: "M4 20V5.5L12 3v17M12 8.5l8 2.5V20M3 20h18M7.5 8h1M7.5 11.5h1M7.5 15h1M15.5 13h1M15.5 16.5h1",
  briefcase: "M3.5 8h17v11.5h-17V8ZM9 8V5.5h6V8M3.5 13h17",
};

export function PlanIcon({ icon, className = "h-6 w-6" }: { icon: Plan["icon"]; className?: string }) {
  return <StrokeIcon d={PATHS[icon]} className={className} strokeWidth={1.8} />;
}
